// Loads the real extension module under node with a stand-in for the 'vscode' module (there is
// no VS Code here), activates it, and checks what a user would see when the interpreter cannot
// run the server: the client commands exist, the command line is logged, the error names it.

import assert from 'node:assert/strict';
import Module from 'node:module';
import { describe, it } from 'node:test';

type Fn = (...args: unknown[]) => unknown;

/** Anything not modelled below: callable, constructible, and every property is another one. */
function anything(): unknown {
  const target = function () {} as unknown as Fn;
  return new Proxy(target, {
    get: (_t, prop) => (prop === Symbol.toPrimitive ? () => '' : prop === 'then' ? undefined : anything()),
    apply: () => anything(),
    construct: () => anything() as object,
  });
}

interface Recorder {
  commands: Map<string, Fn>;
  log: string[];
  errors: string[];
}

function fakeVscode(settings: Record<string, unknown>, rec: Recorder): unknown {
  const disposable = { dispose: () => undefined };
  const event = () => disposable;
  const channel = Object.fromEntries(
    ['info', 'warn', 'error', 'debug', 'trace', 'appendLine', 'append'].map((level) => [
      level,
      (msg: string) => rec.log.push(`${level}: ${msg}`),
    ]),
  );
  const api: Record<string, unknown> = {
    commands: {
      registerCommand: (id: string, fn: Fn) => {
        assert.ok(!rec.commands.has(id), `registered twice: ${id}`);
        rec.commands.set(id, fn);
        return disposable;
      },
      executeCommand: async () => undefined,
    },
    window: {
      createOutputChannel: () => ({ ...channel, show: () => undefined, dispose: () => undefined }),
      showErrorMessage: async (msg: string) => {
        rec.errors.push(msg);
        return undefined;
      },
      showInformationMessage: async () => undefined,
    },
    workspace: {
      workspaceFolders: [{ uri: { fsPath: '/nonexistent-memls-ws', scheme: 'file', toString: () => 'file:///nonexistent-memls-ws' } }],
      getConfiguration: () => ({ get: (key: string) => settings[key] }),
      onDidChangeConfiguration: event,
      onDidChangeWorkspaceFolders: event,
      onDidChangeTextDocument: event,
      registerTextDocumentContentProvider: () => disposable,
      createFileSystemWatcher: () => ({ ...disposable, onDidCreate: event, onDidChange: event, onDidDelete: event }),
    },
    extensions: { getExtension: () => undefined },
  };
  return new Proxy(api, { get: (t, prop: string) => (prop in t ? t[prop] : anything()) });
}

describe('activate', () => {
  it('registers the client commands and reports an interpreter that cannot run the server', async () => {
    const rec: Recorder = { commands: new Map(), log: [], errors: [] };
    const fake = fakeVscode({ interpreter: ['/nonexistent/memls-python', '-X', 'utf8'], roots: ['mem'] }, rec);
    const loader = Module as unknown as { _load: (request: string, ...rest: unknown[]) => unknown };
    const realLoad = loader._load;
    loader._load = (request: string, ...rest: unknown[]) => (request === 'vscode' ? fake : realLoad(request, ...rest));
    try {
      const ext = (await import('../extension')) as typeof import('../extension');
      const subscriptions: { dispose(): unknown }[] = [];
      ext.activate({ subscriptions } as unknown as Parameters<typeof ext.activate>[0]);
      assert.deepEqual([...rec.commands.keys()].sort(), [
        'memls.backfillWithProgress',
        'memls.checkpointSavePrompt',
        'memls.recallSearchPick',
        'memls.restartServer',
        'memls.showOutput',
        'memls.showReferences',
      ]);
      for (let i = 0; i < 100 && rec.errors.length === 0; i++) {
        await new Promise((r) => setTimeout(r, 20));
      }
      assert.ok(
        rec.log.includes('info: Server command (setting): /nonexistent/memls-python -X utf8 -m memls.lsp'),
        rec.log.join('\n'),
      );
      assert.equal(rec.errors.length, 1);
      assert.match(rec.errors[0], /\/nonexistent\/memls-python cannot run the server/);
      assert.ok(subscriptions.length >= 6);
      await ext.deactivate();
    } finally {
      loader._load = realLoad;
    }
  });
});
