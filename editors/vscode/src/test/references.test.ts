import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseShowReferences } from '../references';

const loc = (uri: string, line: number) => ({
  uri,
  range: { start: { line, character: 2 }, end: { line, character: 12 } },
});

describe('parseShowReferences', () => {
  it('accepts the code lens arguments and keeps well-formed locations', () => {
    const parsed = parseShowReferences([
      'file:///m/testing.md',
      { line: 0, character: 2 },
      [loc('file:///m/MEMORY.md', 9), { uri: 'file:///broken' }, loc('file:///m/deploy.md', 2)],
    ]);
    assert.ok(parsed);
    assert.equal(parsed.uri, 'file:///m/testing.md');
    assert.deepEqual(parsed.position, { line: 0, character: 2 });
    assert.deepEqual(
      parsed.locations.map((l) => [l.uri, l.range.start.line]),
      [
        ['file:///m/MEMORY.md', 9],
        ['file:///m/deploy.md', 2],
      ],
    );
  });

  it('refuses arguments of another shape', () => {
    assert.equal(parseShowReferences([]), undefined);
    assert.equal(parseShowReferences(['file:///x', { line: -1, character: 0 }, []]), undefined);
    assert.equal(parseShowReferences([7, { line: 0, character: 0 }, []]), undefined);
    assert.equal(parseShowReferences(['file:///x', { line: 0, character: 0 }, 'nope']), undefined);
  });
});
