// memls for VS Code: starts `<python> -m memls.lsp` over stdio through vscode-languageclient,
// hands it the memory files only, and adds the client-side commands (recall pick, backfill with
// progress, the save-checkpoint flow, restart, output).

import { execFile } from 'node:child_process';
import * as os from 'node:os';
import * as vscode from 'vscode';
import {
  ExecuteCommandRequest,
  LanguageClient,
  LanguageClientOptions,
  RevealOutputChannelOn,
  ServerOptions,
  State,
  TransportKind,
  WorkDoneProgress,
} from 'vscode-languageclient/node';
import {
  PythonExtensionEnvironment,
  ResolvedInterpreter,
  SERVER_MODULE,
  resolveInterpreter,
  serverCommandLine,
} from './interpreter';
import {
  RecentFiles,
  SaveResult,
  Suggestion,
  joinDone,
  nameProblem,
  nextActionProblem,
  parseSaveResult,
  parseSuggestion,
  splitDone,
} from './checkpoint';
import { parseRecallResponse, pickTitle, toPickItems } from './recall';
import { parseShowReferences } from './references';
import { MEMORY_FILE_GLOBS, buildDocumentSelector, discoveredPatterns } from './selectors';
import { MemlsSettings, initializationOptions, readSettings } from './settings';

const CLIENT_ID = 'memls';
const STOP_TIMEOUT_MS = 2000;
const IMPORT_CHECK_TIMEOUT_MS = 20000;
/** Virtual documents holding MEMORY.md as it was before a checkpoint save (the diff's left side). */
const BEFORE_SCHEME = 'memls-before';
const KEPT_BEFORE_TEXTS = 5;

let output: vscode.LogOutputChannel;
let extensionContext: vscode.ExtensionContext | undefined;
let client: LanguageClient | undefined;
let clientDisposables: vscode.Disposable[] = [];
let lifecycle: Promise<void> = Promise.resolve();
const recentFiles = new RecentFiles();
const beforeTexts = new Map<string, string>();

export function activate(context: vscode.ExtensionContext): void {
  extensionContext = context;
  output = vscode.window.createOutputChannel('memls', { log: true });
  context.subscriptions.push(
    output,
    vscode.commands.registerCommand('memls.restartServer', () => restartServer()),
    vscode.commands.registerCommand('memls.showOutput', () => output.show()),
    vscode.commands.registerCommand('memls.recallSearchPick', (query?: unknown) =>
      recallSearchPick(typeof query === 'string' ? query : undefined),
    ),
    vscode.commands.registerCommand('memls.backfillWithProgress', () => backfillWithProgress()),
    vscode.commands.registerCommand('memls.checkpointSavePrompt', () => saveCheckpointFlow({ askName: true })),
    vscode.workspace.registerTextDocumentContentProvider(BEFORE_SCHEME, {
      provideTextDocumentContent: (uri) => beforeTexts.get(uri.toString()) ?? '',
    }),
    // The files the user edits, most recent first: the save flow names them in its prefill.
    vscode.workspace.onDidChangeTextDocument((e) => {
      if (e.document.uri.scheme === 'file' && e.contentChanges.length > 0) {
        recentFiles.touch(e.document.uri.fsPath);
      }
    }),
    vscode.commands.registerCommand('memls.showReferences', (...args: unknown[]) => showReferences(args)),
    vscode.workspace.onDidChangeConfiguration((e) => {
      // The interpreter and the selector are fixed when the client starts; other settings reach
      // the running server through workspace/didChangeConfiguration.
      if (e.affectsConfiguration('memls.interpreter') || e.affectsConfiguration('memls.roots')) {
        void restartServer();
      }
    }),
    vscode.workspace.onDidChangeWorkspaceFolders(() => void restartServer()),
    { dispose: () => void stopServer() },
  );
  watchPythonExtension(context);
  void restartServer();
}

export async function deactivate(): Promise<void> {
  await stopServer();
}

/** Serialises start/stop so overlapping restarts (settings + folder change) cannot race. */
function queue(step: () => Promise<void>): Promise<void> {
  lifecycle = lifecycle.then(step, step);
  return lifecycle;
}

function restartServer(): Promise<void> {
  return queue(async () => {
    await stopClient();
    await startClient();
  });
}

function stopServer(): Promise<void> {
  return queue(stopClient);
}

function currentSettings(): MemlsSettings {
  const config = vscode.workspace.getConfiguration('memls', firstFolder());
  return readSettings((key) => config.get(key));
}

function firstFolder(): vscode.Uri | undefined {
  return vscode.workspace.workspaceFolders?.[0]?.uri;
}

function folderPaths(): string[] {
  return (vscode.workspace.workspaceFolders ?? []).map((f) => f.uri.fsPath);
}

/** Narrow view of the ms-python.python API (`exports.environments`); every member optional
 * because older or future versions may lack it. */
interface PythonEnvironmentsApi {
  getActiveEnvironmentPath?: (resource?: vscode.Uri) => unknown;
  resolveEnvironment?: (env: unknown) => Promise<unknown>;
  onDidChangeActiveEnvironmentPath?: vscode.Event<unknown>;
}

async function pythonEnvironmentsApi(): Promise<PythonEnvironmentsApi | undefined> {
  const ext = vscode.extensions.getExtension('ms-python.python');
  if (ext === undefined) {
    return undefined;
  }
  const exports: unknown = ext.isActive ? ext.exports : await ext.activate();
  const envs = (exports as { environments?: unknown } | undefined)?.environments;
  return typeof envs === 'object' && envs !== null ? (envs as PythonEnvironmentsApi) : undefined;
}

/** The Python extension's active environment for the first folder, or undefined when the
 * extension is absent, has no environments API, or cannot resolve the environment. */
async function pythonExtensionEnvironment(): Promise<PythonExtensionEnvironment | undefined> {
  try {
    const envs = await pythonEnvironmentsApi();
    if (typeof envs?.getActiveEnvironmentPath !== 'function' || typeof envs.resolveEnvironment !== 'function') {
      return undefined;
    }
    const envPath = envs.getActiveEnvironmentPath(firstFolder());
    const resolved = (await envs.resolveEnvironment(envPath)) as
      | { executable?: { uri?: vscode.Uri }; version?: { major?: unknown; minor?: unknown } }
      | undefined;
    const executable = resolved?.executable?.uri?.fsPath;
    if (executable === undefined || executable === '') {
      return undefined;
    }
    const v = resolved?.version;
    const version =
      typeof v?.major === 'number' && typeof v?.minor === 'number' ? { major: v.major, minor: v.minor } : undefined;
    return { executable, version };
  } catch (err) {
    output.warn(`Could not query the Python extension for its environment: ${String(err)}`);
    return undefined;
  }
}

function watchPythonExtension(context: vscode.ExtensionContext): void {
  void pythonEnvironmentsApi()
    .then((envs) => {
      const event = envs?.onDidChangeActiveEnvironmentPath;
      if (typeof event !== 'function') {
        return;
      }
      context.subscriptions.push(
        event(() => {
          if (currentSettings().interpreter.length === 0) {
            output.info('Python extension environment changed; restarting the memls server.');
            void restartServer();
          }
        }),
      );
    })
    .catch((err: unknown) => output.warn(`Python extension not usable: ${String(err)}`));
}

/** Runs `<python> -c "import memls.lsp"` so a missing install is reported as such, with a fix,
 * instead of as an opaque "server exited" loop. */
function checkImport(interpreter: ResolvedInterpreter, cwd: string | undefined): Promise<string | undefined> {
  return new Promise((resolve) => {
    execFile(
      interpreter.command,
      [...interpreter.args, '-c', `import ${SERVER_MODULE}`],
      { cwd, timeout: IMPORT_CHECK_TIMEOUT_MS, windowsHide: true },
      (err, _stdout, stderr) => {
        if (err === null) {
          resolve(undefined);
        } else {
          const detail = String(stderr).trim().split('\n').pop() ?? '';
          resolve(detail !== '' ? detail : err.message);
        }
      },
    );
  });
}

async function startClient(): Promise<void> {
  const settings = currentSettings();
  const cwd = firstFolder()?.fsPath;
  const interpreter = resolveInterpreter({
    setting: settings.interpreter,
    pythonExtension: settings.interpreter.length === 0 ? await pythonExtensionEnvironment() : undefined,
    platform: process.platform,
    expansion: { workspaceFolder: cwd, userHome: os.homedir(), env: process.env },
  });
  interpreter.notes.forEach((note) => output.warn(note));
  const { command, args } = serverCommandLine(interpreter);
  output.info(`Server command (${interpreter.source}): ${[command, ...args].join(' ')}`);

  // The import check costs a Python start (0.5-1 s) before the server's own: an interpreter
  // that passed it before (remembered per command line) starts the server at once, and is
  // checked again only if the server then fails to start.
  const commandKey = [interpreter.command, ...interpreter.args].join('\u0000');
  const checked = importChecked().includes(commandKey);
  if (!checked) {
    const problem = await checkImport(interpreter, cwd);
    if (problem !== undefined) {
      reportImportProblem(interpreter, problem);
      return;
    }
    await rememberImportCheck(commandKey, true);
  }

  const serverOptions: ServerOptions = {
    command,
    args,
    transport: TransportKind.stdio,
    options: { cwd, env: { ...process.env, PYTHONUNBUFFERED: '1' } },
  };
  const watcher = vscode.workspace.createFileSystemWatcher(`**/{${MEMORY_FILE_GLOBS.map((g) => g.slice(3)).join(',')}}`);
  const selector = buildDocumentSelector(
    settings.roots,
    { workspaceFolders: folderPaths(), userHome: os.homedir(), platform: process.platform },
    discoveredPatterns(await selectorMarkers(), process.platform),
  );
  output.info(`Document selector: ${selector.map((f) => f.pattern).join(', ')}`);
  const clientOptions: LanguageClientOptions = {
    documentSelector: selector,
    synchronize: { configurationSection: 'memls', fileEvents: watcher },
    initializationOptions: initializationOptions(settings),
    outputChannel: output,
    traceOutputChannel: output,
    revealOutputChannelOn: RevealOutputChannelOn.Never,
    // No diagnosticCollectionName: the server's pull diagnostics (identifier "memls") make
    // the collection named memls; a second one of that name is an error VS Code logs.
    middleware: { executeCommand: paletteMiddleware },
  };
  const next = new LanguageClient(CLIENT_ID, 'memls', serverOptions, clientOptions);
  clientDisposables = [
    watcher,
    next.onDidChangeState((e) => output.info(`Server state: ${State[e.oldState]} -> ${State[e.newState]}`)),
  ];
  client = next;
  try {
    await next.start();
  } catch (err) {
    output.error(`memls server failed to start: ${String(err)}`);
    const problem = checked ? await checkImport(interpreter, cwd) : undefined;
    if (problem !== undefined) {
      await rememberImportCheck(commandKey, false);
      reportImportProblem(interpreter, problem);
    } else {
      void vscode.window.showErrorMessage('memls: the language server failed to start; see the memls output.');
    }
  }
}

const IMPORT_CHECKED_KEY = 'memls-import-checked';

function importChecked(): string[] {
  const value = extensionContext?.globalState?.get<unknown>(IMPORT_CHECKED_KEY);
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];
}

async function rememberImportCheck(key: string, ok: boolean): Promise<void> {
  const state = extensionContext?.globalState;
  if (state === undefined) {
    return;
  }
  const rest = importChecked().filter((k) => k !== key);
  await state.update(IMPORT_CHECKED_KEY, ok ? [key, ...rest].slice(0, 10) : rest);
}

function reportImportProblem(interpreter: ResolvedInterpreter, problem: string): void {
  output.error(`${interpreter.command} cannot import ${SERVER_MODULE}: ${problem}`);
  void vscode.window
    .showErrorMessage(
      `memls: ${interpreter.command} cannot run the server (${problem}). Install memls in that ` +
        'environment (from a clone: pip install /path/to/memls) or set "memls.interpreter".',
      'Open Settings',
      'Show Output',
    )
    .then((choice) => {
      if (choice === 'Open Settings') {
        void vscode.commands.executeCommand('workbench.action.openSettings', 'memls.interpreter');
      } else if (choice === 'Show Output') {
        output.show();
      }
    });
}

async function stopClient(): Promise<void> {
  const old = client;
  client = undefined;
  clientDisposables.forEach((d) => d.dispose());
  clientDisposables = [];
  if (old === undefined) {
    return;
  }
  try {
    if (old.state !== State.Stopped) {
      await old.stop(STOP_TIMEOUT_MS);
    }
  } catch (err) {
    output.warn(`memls server did not stop cleanly: ${String(err)}`);
  }
}

/** The running client, after any pending restart; shows an error when there is none. */
async function runningClient(): Promise<LanguageClient | undefined> {
  await lifecycle;
  if (client === undefined || client.state !== State.Running) {
    const choice = await vscode.window.showErrorMessage('memls: the language server is not running.', 'Restart', 'Show Output');
    if (choice === 'Restart') {
      await restartServer();
    } else if (choice === 'Show Output') {
      output.show();
    }
    return undefined;
  }
  return client;
}

/** URI the server uses to find the memory root: the active file, else the first folder. */
function contextUri(): string | undefined {
  const doc = vscode.window.activeTextEditor?.document;
  if (doc !== undefined && doc.uri.scheme === 'file') {
    return doc.uri.toString();
  }
  return firstFolder()?.toString();
}

/** Shows an operation's `{message}`: short ones in a notification, long ones in the output. */
function reportResult(command: string, result: unknown): void {
  const message = (result as { message?: unknown } | null | undefined)?.message;
  if (typeof message !== 'string' || message.trim() === '') {
    return;
  }
  output.info(`${command}: ${message}`);
  const lines = message.trim().split('\n');
  if (lines.length === 1 && message.length <= 300) {
    void vscode.window.showInformationMessage(`memls: ${message.trim()}`);
    return;
  }
  void vscode.window.showInformationMessage(`memls: ${lines[0]}`, 'Show Output').then((choice) => {
    if (choice === 'Show Output') {
      output.show();
    }
  });
}

/** Server commands run from the palette arrive without arguments: add the context URI (and
 * the one required input, a checkpoint name for clear). Calls with arguments (code actions,
 * code lenses, other extensions) pass through unchanged. Either way the resulting message is
 * shown here: the server leaves that to this client (`clientShowsCommandResults`). Recall
 * search results go back to the caller, which presents them. */
async function paletteMiddleware(
  command: string,
  args: unknown[],
  next: (command: string, args: unknown[]) => unknown,
): Promise<unknown> {
  if (command === 'memls.checkpoint.save' && !hasNextAction(args)) {
    // From the palette, the Ctrl+. quick fix or Source Action…: ask for the next action first.
    const given = (typeof args[0] === 'object' && args[0] !== null ? args[0] : {}) as Record<string, unknown>;
    return saveCheckpointFlow({
      askName: false,
      uri: typeof given.uri === 'string' ? given.uri : undefined,
      name: typeof given.name === 'string' && given.name !== '' ? given.name : undefined,
    });
  }
  if (args.length > 0) {
    const result = await next(command, args);
    if (command !== 'memls.recall.search') {
      reportResult(command, result);
    }
    return result;
  }
  const arg: Record<string, unknown> = {};
  const uri = contextUri();
  if (uri !== undefined) {
    arg.uri = uri;
  }
  if (command === 'memls.checkpoint.clear') {
    const name = await vscode.window.showInputBox({
      title: 'memls: clear checkpoint',
      prompt: 'Name of the checkpoint to clear (type * to clear all)',
      ignoreFocusOut: true,
      validateInput: (v) => (v.trim() === '' ? 'A checkpoint name is required' : undefined),
    });
    if (name === undefined) {
      return undefined;
    }
    if (name.trim() === '*') {
      arg.name = null;
      arg.all = true;
    } else {
      arg.name = name.trim();
    }
  }
  const result = await next(command, [arg]);
  reportResult(command, result);
  return result;
}

async function runServerCommand(clientNow: LanguageClient, command: string, arg: Record<string, unknown>): Promise<unknown> {
  return clientNow.sendRequest(ExecuteCommandRequest.type, { command, arguments: [arg] });
}

async function recallSearchPick(initialQuery?: string): Promise<void> {
  const query =
    initialQuery ??
    (await vscode.window.showInputBox({
      title: 'memls: recall',
      prompt: 'Search the memory (topic files, checkpoints, handoff, LOG, transcripts)',
      ignoreFocusOut: true,
    }));
  if (query === undefined || query.trim() === '') {
    return;
  }
  const c = await runningClient();
  if (c === undefined) {
    return;
  }
  let raw: unknown;
  try {
    raw = await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Window, title: 'memls: searching memory' },
      () => runServerCommand(c, 'memls.recall.search', { query: query.trim(), uri: contextUri() }),
    );
  } catch (err) {
    output.error(`memls.recall.search failed: ${String(err)}`);
    void vscode.window.showErrorMessage(`memls: recall search failed: ${String(err)}`);
    return;
  }
  const response = parseRecallResponse(raw);
  if (response.results.length === 0) {
    const note = response.degraded ? ' (degraded: text search only)' : '';
    void vscode.window.showInformationMessage(`memls: no recall results for "${query.trim()}"${note}.`);
    return;
  }
  const picked = await vscode.window.showQuickPick(toPickItems(response, folderPaths(), process.platform), {
    title: pickTitle(response, query.trim()),
    matchOnDescription: true,
    matchOnDetail: true,
  });
  if (picked === undefined) {
    return;
  }
  const { hit } = picked;
  const document = await vscode.workspace.openTextDocument(vscode.Uri.file(hit.path));
  const start = new vscode.Position(Math.min(hit.start_line, document.lineCount - 1), 0);
  const end = new vscode.Position(Math.min(hit.end_line, document.lineCount - 1), 0);
  const editor = await vscode.window.showTextDocument(document, { selection: new vscode.Range(start, start) });
  editor.revealRange(new vscode.Range(start, end), vscode.TextEditorRevealType.InCenterIfOutsideViewport);
}

/** Backfill with a cancellable notification. The request carries a workDoneToken, so a server
 * that reports on the client's token fills this notification's bar. */
async function backfillWithProgress(): Promise<void> {
  const c = await runningClient();
  if (c === undefined) {
    return;
  }
  const token = `memls-backfill-${Date.now()}`;
  await vscode.window.withProgress(
    { location: vscode.ProgressLocation.Notification, title: 'memls: backfilling recall', cancellable: true },
    async (progress, cancel) => {
      let done = 0;
      const sub = c.onProgress(WorkDoneProgress.type, token, (value) => {
        if (value.kind === 'end') {
          return;
        }
        const pct = value.percentage;
        if (typeof pct === 'number' && pct > done) {
          progress.report({ increment: pct - done, message: value.message });
          done = pct;
        } else {
          progress.report({ message: value.message });
        }
      });
      try {
        const result = await c.sendRequest(
          ExecuteCommandRequest.type,
          { command: 'memls.recall.backfill', arguments: [{ uri: contextUri() }], workDoneToken: token },
          cancel,
        );
        reportResult('memls.recall.backfill', result);
      } catch (err) {
        if (!cancel.isCancellationRequested) {
          output.error(`memls.recall.backfill failed: ${String(err)}`);
          void vscode.window.showErrorMessage(`memls: backfill failed: ${String(err)}`);
        }
      } finally {
        sub.dispose();
      }
    },
  );
}

function hasNextAction(args: unknown[]): boolean {
  const first = args[0] as { next?: unknown } | null | undefined;
  return typeof first === 'object' && first !== null && typeof first.next === 'string' && first.next.trim() !== '';
}

async function suggestion(c: LanguageClient, uri: string | undefined, name: string | undefined): Promise<Suggestion> {
  try {
    const arg: Record<string, unknown> = { uri, files: recentFiles.list() };
    if (name !== undefined) {
      arg.name = name;
    }
    return parseSuggestion(await runServerCommand(c, 'memls.checkpoint.suggest', arg));
  } catch (err) {
    output.warn(`memls.checkpoint.suggest failed: ${String(err)}`);
    return parseSuggestion(undefined);
  }
}

/** Save checkpoint as an editor flow: what memls can infer (branch, recently edited files,
 * commits since the last save) prefills an input box for the next action and one for what
 * was done; the server writes the checkpoint (no placeholder), opens it, and this shows
 * what changed in MEMORY.md beside it. */
async function saveCheckpointFlow(opts: { askName: boolean; uri?: string; name?: string }): Promise<unknown> {
  const c = await runningClient();
  if (c === undefined) {
    return undefined;
  }
  const uri = opts.uri ?? contextUri();
  let suggested = await suggestion(c, uri, opts.name);
  let name = opts.name ?? suggested.name;
  if (opts.askName || name === undefined) {
    const typed = await vscode.window.showInputBox({
      title: 'memls: save checkpoint',
      prompt:
        suggested.branch !== undefined
          ? `Checkpoint name (the current branch gives "${suggested.name ?? ''}")`
          : 'Checkpoint name',
      value: name ?? '',
      ignoreFocusOut: true,
      validateInput: nameProblem,
    });
    if (typed === undefined) {
      return undefined;
    }
    if (typed.trim() !== name) {
      name = typed.trim();
      suggested = await suggestion(c, uri, name);
      name = suggested.name ?? name;
    }
  }
  const next = await vscode.window.showInputBox({
    title: `memls: save checkpoint "${name}" (1/2): next action`,
    prompt: 'The first concrete step for whoever resumes, with file paths',
    value: suggested.next,
    valueSelection: [suggested.next.length, suggested.next.length],
    ignoreFocusOut: true,
    validateInput: nextActionProblem,
  });
  if (next === undefined) {
    return undefined;
  }
  const done = await vscode.window.showInputBox({
    title: `memls: save checkpoint "${name}" (2/2): done this session`,
    prompt: 'What this session finished, items separated by ";" (leave empty when nothing was)',
    value: joinDone(suggested.done),
    ignoreFocusOut: true,
  });
  if (done === undefined) {
    return undefined;
  }
  let raw: unknown;
  try {
    raw = await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Window, title: 'memls: saving checkpoint' },
      () =>
        runServerCommand(c, 'memls.checkpoint.save', {
          uri,
          name,
          next: next.trim(),
          done: splitDone(done),
          files: recentFiles.list(),
        }),
    );
  } catch (err) {
    output.error(`memls.checkpoint.save failed: ${String(err)}`);
    void vscode.window.showErrorMessage(`memls: checkpoint save failed: ${String(err)}`);
    return undefined;
  }
  reportResult('memls.checkpoint.save', raw);
  await showIndexChange(parseSaveResult(raw), name ?? '');
  return raw;
}

/** MEMORY.md before and after the save, in a diff editor beside the opened checkpoint. */
async function showIndexChange(result: SaveResult, name: string): Promise<void> {
  if (result.index === undefined || result.indexDiff === '') {
    return;
  }
  try {
    if (result.indexBefore === undefined) {
      const doc = await vscode.workspace.openTextDocument({ language: 'diff', content: result.indexDiff });
      await vscode.window.showTextDocument(doc, { viewColumn: vscode.ViewColumn.Beside, preserveFocus: true });
      return;
    }
    const left = vscode.Uri.from({ scheme: BEFORE_SCHEME, path: result.index, query: String(Date.now()) });
    beforeTexts.set(left.toString(), result.indexBefore);
    while (beforeTexts.size > KEPT_BEFORE_TEXTS) {
      beforeTexts.delete(beforeTexts.keys().next().value as string);
    }
    await vscode.commands.executeCommand(
      'vscode.diff',
      left,
      vscode.Uri.file(result.index),
      `MEMORY.md: before ↔ after saving "${name}"`,
      { viewColumn: vscode.ViewColumn.Beside, preserveFocus: true, preview: true },
    );
  } catch (err) {
    output.warn(`Could not show the MEMORY.md change: ${String(err)}`);
  }
}

/** The code lens "N references" (server command `memls.showReferences`): VS Code's own
 * references peek at the lens, listing every place that links to the file or checkpoint. */
async function showReferences(args: readonly unknown[]): Promise<void> {
  const parsed = parseShowReferences(args);
  if (parsed === undefined) {
    output.warn(`memls.showReferences: unexpected arguments ${JSON.stringify(args)}`);
    return;
  }
  const locations = parsed.locations.map(
    (l) =>
      new vscode.Location(
        vscode.Uri.parse(l.uri),
        new vscode.Range(l.range.start.line, l.range.start.character, l.range.end.line, l.range.end.character),
      ),
  );
  await vscode.commands.executeCommand(
    'editor.action.showReferences',
    vscode.Uri.parse(parsed.uri),
    new vscode.Position(parsed.position.line, parsed.position.character),
    locations,
  );
}

/** MEMORY.md and LOG.md files in the workspace (at most 200): their folders' topic files are
 * handed to the server too (code lens, hover, rename, completion in topic files). */
const MARKERS_KEY = 'memls-memory-markers';

/** The MEMORY.md / LOG.md files the document selector covers. The workspace search costs
 * 0.3-0.5 s before the server can start; a folder opened before starts at once with the
 * files found last time (kept in workspaceState) while a new search runs, and the server is
 * restarted once only if that search finds a different set. */
async function selectorMarkers(): Promise<string[]> {
  const state = extensionContext?.workspaceState;
  const cached = state?.get<unknown>(MARKERS_KEY);
  const search = memoryMarkers().then(async (found) => {
    await state?.update(MARKERS_KEY, found);
    return found;
  });
  if (!Array.isArray(cached) || !cached.every((x) => typeof x === 'string')) {
    return search;
  }
  const known = [...cached].sort();
  void search.then((found) => {
    const now = [...found].sort();
    if (now.length !== known.length || now.some((file, i) => file !== known[i])) {
      output.info('Memory files changed since this folder was last open; restarting the server.');
      void restartServer();
    }
  });
  return known;
}

async function memoryMarkers(): Promise<string[]> {
  if (typeof vscode.workspace.findFiles !== 'function') {
    return [];
  }
  try {
    const found = await vscode.workspace.findFiles(
      '**/{MEMORY.md,LOG.md}',
      '**/{node_modules,.git,.venv,venv}/**',
      200,
    );
    return found.filter((u) => u.scheme === 'file').map((u) => u.fsPath);
  } catch (err) {
    output.warn(`Could not look for memory roots: ${String(err)}`);
    return [];
  }
}
