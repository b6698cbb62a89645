import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  RecentFiles,
  joinDone,
  nameProblem,
  nextActionProblem,
  parseSaveResult,
  parseSuggestion,
  splitDone,
} from '../checkpoint';

describe('parseSuggestion', () => {
  it('keeps what the server inferred and drops malformed fields', () => {
    const s = parseSuggestion({
      name: 'feat-login',
      branch: 'feat/login',
      exists: false,
      next: 'Continue on `feat/login`: `src/login.py`',
      done: ['Add the login module', 3, ''],
      files: ['src/login.py', null],
    });
    assert.deepEqual(s, {
      name: 'feat-login',
      branch: 'feat/login',
      exists: false,
      next: 'Continue on `feat/login`: `src/login.py`',
      done: ['Add the login module'],
      files: ['src/login.py'],
    });
  });

  it('gives empty values for an answer that is not an object', () => {
    assert.deepEqual(parseSuggestion(null), {
      name: undefined,
      branch: undefined,
      exists: false,
      next: '',
      done: [],
      files: [],
    });
  });
});

describe('Done items in one input box', () => {
  it('round-trips items and turns a semicolon inside an item into a comma', () => {
    assert.equal(joinDone(['a; b', 'c']), 'a, b; c');
    assert.deepEqual(splitDone(' a ;; b;  '), ['a', 'b']);
    assert.deepEqual(splitDone(''), []);
  });
});

describe('input validation', () => {
  it('asks for a name without separators and a non-empty next action', () => {
    assert.ok(nameProblem(''));
    assert.ok(nameProblem('a/b'));
    assert.equal(nameProblem('feat-login'), undefined);
    assert.ok(nextActionProblem('  '));
    assert.equal(nextActionProblem('Post the form'), undefined);
  });
});

describe('RecentFiles', () => {
  it('lists the most recent first, once each, up to the limit', () => {
    const r = new RecentFiles(3);
    ['a', 'b', 'a', 'c', 'd'].forEach((p) => r.touch(p));
    assert.deepEqual(r.list(), ['d', 'c', 'a']);
  });
});

describe('parseSaveResult', () => {
  it('reads the checkpoint, MEMORY.md before and the diff', () => {
    const r = parseSaveResult({
      message: 'saved',
      checkpoint: '/m/checkpoint-x.md',
      index: '/m/MEMORY.md',
      index_before: '',
      index_diff: '+- **x**',
    });
    assert.equal(r.checkpoint, '/m/checkpoint-x.md');
    assert.equal(r.indexBefore, '');
    assert.equal(r.indexDiff, '+- **x**');
    assert.equal(parseSaveResult(undefined).indexDiff, '');
  });
});
