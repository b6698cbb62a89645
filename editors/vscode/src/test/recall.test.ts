import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { displayPath, parseRecallResponse, pickTitle, toPickItems } from '../recall';

const answer = {
  mode: 'hybrid',
  degraded: false,
  results: [
    {
      id: 'a1',
      score: 0.8123,
      kind: 'topic',
      path: '/w/memory/auth.md',
      start_line: 4,
      end_line: 9,
      heading: 'Token refresh',
      snippet: 'We  retry\nonce  then\tgive up.',
    },
    { id: 7, score: 0.5, kind: 'checkpoint', path: '/elsewhere/checkpoint-x.md', start_line: 0, end_line: 2, heading: '', snippet: '' },
    { id: 'bad', score: 1, kind: 'topic', start_line: 1, end_line: 1 },
    'junk',
  ],
};

describe('parseRecallResponse', () => {
  it('keeps well-formed hits in rank order and drops malformed ones', () => {
    const r = parseRecallResponse(answer);
    assert.equal(r.mode, 'hybrid');
    assert.equal(r.degraded, false);
    assert.deepEqual(
      r.results.map((h) => h.id),
      ['a1', '7'],
    );
  });

  it('repairs bad line numbers', () => {
    const r = parseRecallResponse({ results: [{ path: '/x.md', start_line: 5, end_line: 2 }, { path: '/y.md', start_line: -1 }] });
    assert.deepEqual(
      r.results.map((h) => [h.start_line, h.end_line]),
      [
        [5, 5],
        [0, 0],
      ],
    );
  });

  it('tolerates a non-object answer', () => {
    assert.deepEqual(parseRecallResponse(null), { results: [], mode: 'unknown', degraded: false });
    assert.deepEqual(parseRecallResponse([1]).results, []);
  });
});

describe('toPickItems', () => {
  it('labels hits by heading or file name and shows 1-based relative locations', () => {
    const items = toPickItems(parseRecallResponse(answer), ['/w']);
    assert.equal(items.length, 2);
    assert.equal(items[0].label, 'Token refresh');
    assert.equal(items[0].description, 'topic · memory/auth.md:5 · 0.812');
    assert.equal(items[0].detail, 'We retry once then give up.');
    assert.equal(items[0].hit.start_line, 4);
    assert.equal(items[1].label, 'checkpoint-x.md');
    assert.equal(items[1].description, 'checkpoint · /elsewhere/checkpoint-x.md:1 · 0.500');
  });

  it('shortens long snippets', () => {
    const r = parseRecallResponse({ results: [{ path: '/a.md', snippet: 'x'.repeat(500) }] });
    const detail = toPickItems(r, [])[0].detail;
    assert.equal(detail.length, 200);
    assert.ok(detail.endsWith('…'));
  });
});

describe('display helpers', () => {
  it('displayPath stays absolute outside the workspace folders', () => {
    assert.equal(displayPath('/w2/a.md', ['/w']), '/w2/a.md');
    assert.equal(displayPath('/w/a/b.md', ['/x', '/w']), 'a/b.md');
    assert.equal(displayPath('C:\\w\\m\\a.md', ['C:\\w'], 'win32'), 'm/a.md');
  });

  it('pickTitle says when recall is degraded', () => {
    assert.match(pickTitle({ results: [], mode: 'text', degraded: true }, 'q'), /degraded: text search only/);
    assert.doesNotMatch(pickTitle({ results: [], mode: 'hybrid', degraded: false }, 'q'), /degraded/);
  });
});
