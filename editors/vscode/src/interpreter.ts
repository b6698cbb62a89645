// Interpreter resolution for the memls server, kept free of the 'vscode' module so it can be
// unit-tested under plain node. extension.ts gathers the inputs (settings, Python extension
// environment, platform) and hands them to resolveInterpreter().

/** Oldest Python memls runs on (pyproject.toml: requires-python >= 3.11). */
export const MIN_PYTHON: readonly [number, number] = [3, 11];

/** The module the server is started from: `<python> -m memls.lsp` speaks LSP on stdio. */
export const SERVER_MODULE = 'memls.lsp';

/** What the Python extension reported for the active environment, already unwrapped. */
export interface PythonExtensionEnvironment {
  /** Absolute path of the environment's python executable. */
  executable?: string;
  /** Interpreter version when the extension could resolve it. */
  version?: { major: number; minor: number };
}

/** Values used to expand `${...}` variables and `~` in the interpreter setting. */
export interface ExpansionContext {
  workspaceFolder?: string;
  userHome?: string;
  env?: Readonly<Record<string, string | undefined>>;
}

export interface InterpreterInputs {
  /** Value of the `memls.interpreter` setting (a command line split into words). */
  setting?: readonly unknown[] | unknown;
  /** Active environment of the ms-python.python extension, when that extension is present. */
  pythonExtension?: PythonExtensionEnvironment;
  /** `process.platform`; picks the fallback command. */
  platform?: string;
  expansion?: ExpansionContext;
}

export type InterpreterSource = 'setting' | 'python-extension' | 'default';

export interface ResolvedInterpreter {
  /** Executable to spawn. */
  command: string;
  /** Arguments that belong to the interpreter itself (e.g. `run python` for `uv run python`). */
  args: string[];
  source: InterpreterSource;
  /** Why a candidate was passed over, for the output channel; empty when nothing was skipped. */
  notes: string[];
}

/** Expands `${workspaceFolder}`, `${userHome}`, `${env:NAME}` and a leading `~` like the
 * Python tools extensions do, so one settings.json works across machines. Unknown variables
 * are left as they are so the failure is visible in the spawned command line. */
export function expandVariables(value: string, ctx: ExpansionContext): string {
  let out = value;
  if (ctx.userHome !== undefined && (out === '~' || out.startsWith('~/') || out.startsWith('~\\'))) {
    out = ctx.userHome + out.slice(1);
  }
  return out.replace(/\$\{([^}]+)\}/g, (whole: string, name: string) => {
    if (name === 'workspaceFolder' && ctx.workspaceFolder !== undefined) {
      return ctx.workspaceFolder;
    }
    if (name === 'userHome' && ctx.userHome !== undefined) {
      return ctx.userHome;
    }
    if (name.startsWith('env:')) {
      return ctx.env?.[name.slice(4)] ?? '';
    }
    return whole;
  });
}

/** The fallback when neither the setting nor the Python extension names an interpreter. */
export function defaultPython(platform: string | undefined): string {
  // Windows installs `python` (and the `py` launcher); `python3` there is often the Store stub.
  return platform === 'win32' ? 'python' : 'python3';
}

function settingWords(setting: unknown): string[] {
  if (typeof setting === 'string') {
    return setting.trim() === '' ? [] : [setting.trim()];
  }
  if (!Array.isArray(setting)) {
    return [];
  }
  return setting.filter((w): w is string => typeof w === 'string' && w.trim() !== '');
}

function versionOk(version: { major: number; minor: number }): boolean {
  const [major, minor] = MIN_PYTHON;
  return version.major > major || (version.major === major && version.minor >= minor);
}

/** Picks the interpreter: the `memls.interpreter` setting, else the Python extension's active
 * environment (when it is new enough), else `python3`. */
export function resolveInterpreter(inputs: InterpreterInputs): ResolvedInterpreter {
  const notes: string[] = [];
  const expansion = inputs.expansion ?? {};
  const words = settingWords(inputs.setting).map((w) => expandVariables(w, expansion));
  if (words.length > 0) {
    return { command: words[0], args: words.slice(1), source: 'setting', notes };
  }
  const env = inputs.pythonExtension;
  if (env?.executable) {
    if (env.version === undefined || versionOk(env.version)) {
      return { command: env.executable, args: [], source: 'python-extension', notes };
    }
    notes.push(
      `Python extension environment ${env.executable} is Python ${env.version.major}.${env.version.minor}; ` +
        `memls needs ${MIN_PYTHON.join('.')}+, falling back to ${defaultPython(inputs.platform)}.`,
    );
  }
  return { command: defaultPython(inputs.platform), args: [], source: 'default', notes };
}

/** The full server command line: `<interpreter> -m memls.lsp`. */
export function serverCommandLine(interpreter: ResolvedInterpreter): { command: string; args: string[] } {
  return { command: interpreter.command, args: [...interpreter.args, '-m', SERVER_MODULE] };
}
