import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  MEMORY_FILE_GLOBS,
  buildDocumentSelector,
  discoveredPatterns,
  escapeGlob,
  resolveRoot,
  rootPattern,
} from '../selectors';

const patterns = (roots: unknown[], ctx = {}) => buildDocumentSelector(roots, ctx).map((f) => f.pattern);

describe('buildDocumentSelector', () => {
  it('selects the memory file names on disk when no root is configured', () => {
    const sel = buildDocumentSelector([]);
    assert.deepEqual(sel, [
      { scheme: 'file', pattern: '**/MEMORY.md' },
      { scheme: 'file', pattern: '**/checkpoint-*.md' },
      { scheme: 'file', pattern: '**/.handoff.md' },
      { scheme: 'file', pattern: '**/LOG.md' },
    ]);
    assert.ok(sel.every((f) => f.scheme === 'file'));
  });

  it('adds every Markdown file below an absolute root', () => {
    assert.deepEqual(patterns(['/home/u/.claude/projects/-w/memory']), [
      ...MEMORY_FILE_GLOBS,
      '/home/u/.claude/projects/-w/memory/**/*.md',
    ]);
  });

  it('resolves a relative root against every workspace folder', () => {
    assert.deepEqual(patterns(['memory', './notes/'], { workspaceFolders: ['/a', '/b'] }).slice(4), [
      '/a/memory/**/*.md',
      '/b/memory/**/*.md',
      '/a/notes/**/*.md',
      '/b/notes/**/*.md',
    ]);
  });

  it('drops relative roots when no folder is open, and non-string or blank entries', () => {
    assert.deepEqual(patterns(['memory', 7, null, '  ']), [...MEMORY_FILE_GLOBS]);
  });

  it('expands ~ and removes duplicates', () => {
    assert.deepEqual(patterns(['~/mem', '/home/u/mem/', '/home/u/x/../mem'], { userHome: '/home/u' }).slice(4), [
      '/home/u/mem/**/*.md',
    ]);
  });

  it('escapes glob characters in root paths', () => {
    assert.deepEqual(patterns(['/p/{a,b}/[x]*?']).slice(4), ['/p/[{]a,b[}]/[[]x?[*][?]/**/*.md']);
  });

  it('handles Windows paths', () => {
    const ctx = { platform: 'win32', workspaceFolders: ['C:\\work\\proj'] };
    assert.deepEqual(patterns(['memory', 'D:\\mem\\'], ctx).slice(4), ['c:/work/proj/memory/**/*.md', 'd:/mem/**/*.md']);
  });
});

describe('helpers', () => {
  it('escapeGlob leaves ordinary paths unchanged', () => {
    assert.equal(escapeGlob('/home/u/my notes-1.0/mem'), '/home/u/my notes-1.0/mem');
  });

  it('rootPattern copes with the file-system root', () => {
    assert.equal(rootPattern('/'), '/**/*.md');
    assert.equal(rootPattern('/m///'), '/m/**/*.md');
  });

  it('resolveRoot normalises absolute roots', () => {
    assert.deepEqual(resolveRoot('/a/./b/../c'), ['/a/c']);
    assert.deepEqual(resolveRoot(''), []);
  });
});

describe('discoveredPatterns', () => {
  it("selects the Markdown files beside a found MEMORY.md or LOG.md, and in its memory/", () => {
    assert.deepEqual(discoveredPatterns(['/w/proj/mem/MEMORY.md', '/w/proj/mem/LOG.md', '/w/o[1]/LOG.md']), [
      '/w/proj/mem/*.md',
      '/w/proj/mem/memory/*.md',
      '/w/o[[]1?/*.md',
      '/w/o[[]1?/memory/*.md',
    ]);
  });

  it('joins the selector after the configured roots, without duplicates', () => {
    const sel = buildDocumentSelector(['/w/proj/mem'], {}, discoveredPatterns(['/w/proj/mem/MEMORY.md']));
    assert.deepEqual(
      sel.map((f) => f.pattern).slice(4),
      ['/w/proj/mem/**/*.md', '/w/proj/mem/*.md', '/w/proj/mem/memory/*.md'],
    );
  });
});
