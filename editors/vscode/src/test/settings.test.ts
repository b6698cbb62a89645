import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DEFAULT_STALE_DAYS, initializationOptions, readSettings, serverSettings } from '../settings';

const from = (values: Record<string, unknown>) => readSettings((key) => values[key]);

describe('readSettings', () => {
  it('returns the defaults when nothing is set', () => {
    assert.deepEqual(from({}), {
      interpreter: [],
      roots: [],
      staleDays: DEFAULT_STALE_DAYS,
      select: [],
      ignore: [],
      recall: { model: '' },
      trace: { server: 'off' },
    });
    assert.equal(DEFAULT_STALE_DAYS, 14);
  });

  it('reads well-typed values', () => {
    const s = from({
      interpreter: ['/py'],
      roots: ['memory'],
      staleDays: 3,
      select: ['MEM'],
      ignore: ['MEM010'],
      'recall.model': ' memls-hash ',
      'trace.server': 'verbose',
    });
    assert.deepEqual(s.interpreter, ['/py']);
    assert.deepEqual(s.roots, ['memory']);
    assert.equal(s.staleDays, 3);
    assert.deepEqual(s.select, ['MEM']);
    assert.deepEqual(s.ignore, ['MEM010']);
    assert.equal(s.recall.model, 'memls-hash');
    assert.equal(s.trace.server, 'verbose');
  });

  it('replaces wrongly typed values by defaults', () => {
    const s = from({ roots: 'memory', staleDays: -1, select: [1, 'A', ''], 'recall.model': 5, 'trace.server': 'loud' });
    assert.deepEqual(s.roots, []);
    assert.equal(s.staleDays, DEFAULT_STALE_DAYS);
    assert.deepEqual(s.select, ['A']);
    assert.equal(s.recall.model, '');
    assert.equal(s.trace.server, 'off');
    assert.equal(from({ staleDays: Number.NaN }).staleDays, DEFAULT_STALE_DAYS);
    assert.equal(from({ staleDays: 0 }).staleDays, 0);
  });
});

describe('serverSettings', () => {
  it('keeps the server keys and drops the client-only ones', () => {
    const s = serverSettings(from({ interpreter: ['/py'], roots: ['/m'], staleDays: 7, 'trace.server': 'messages' }));
    assert.deepEqual(s, { roots: ['/m'], staleDays: 7, select: [], ignore: [], recall: { model: '' } });
  });
});

describe('initializationOptions', () => {
  it('are the server settings plus clientShowsCommandResults', () => {
    const settings = from({ roots: ['/m'], 'recall.model': 'memls-hash' });
    assert.deepEqual(initializationOptions(settings), {
      ...serverSettings(settings),
      clientShowsCommandResults: true,
    });
    assert.equal(initializationOptions(settings).recall.model, 'memls-hash');
  });

  it('are not what didChangeConfiguration sends (the flag is fixed at initialize)', () => {
    assert.ok(!('clientShowsCommandResults' in serverSettings(from({}))));
  });
});
