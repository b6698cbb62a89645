// The `memls.*` settings, normalised. Kept free of the 'vscode' module: extension.ts passes a
// getter over `workspace.getConfiguration('memls')`, tests pass a plain lookup.

export const DEFAULT_STALE_DAYS = 14;

export type TraceLevel = 'off' | 'messages' | 'verbose';

export interface MemlsSettings {
  interpreter: string[];
  roots: string[];
  staleDays: number;
  select: string[];
  ignore: string[];
  recall: { model: string };
  trace: { server: TraceLevel };
}

/** What the server receives as `initializationOptions`: the same keys (and nesting) as the
 * `memls` configuration section it later gets through `workspace/didChangeConfiguration`,
 * minus the client-only ones (interpreter, trace). */
export interface ServerSettings {
  roots: string[];
  staleDays: number;
  select: string[];
  ignore: string[];
  recall: { model: string };
}

function strings(value: unknown): string[] {
  if (!Array.isArray(value)) {
    return [];
  }
  return value.filter((v): v is string => typeof v === 'string' && v.trim() !== '').map((v) => v.trim());
}

/** Reads the settings through `get(key)` (keys without the `memls.` prefix), replacing values of
 * the wrong type by the defaults so a hand-edited settings.json cannot crash activation. */
export function readSettings(get: (key: string) => unknown): MemlsSettings {
  const stale = get('staleDays');
  const model = get('recall.model');
  const trace = get('trace.server');
  return {
    interpreter: strings(get('interpreter')),
    roots: strings(get('roots')),
    staleDays: typeof stale === 'number' && Number.isFinite(stale) && stale >= 0 ? stale : DEFAULT_STALE_DAYS,
    select: strings(get('select')),
    ignore: strings(get('ignore')),
    recall: { model: typeof model === 'string' ? model.trim() : '' },
    trace: { server: trace === 'messages' || trace === 'verbose' ? trace : 'off' },
  };
}

export function serverSettings(settings: MemlsSettings): ServerSettings {
  return {
    roots: [...settings.roots],
    staleDays: settings.staleDays,
    select: [...settings.select],
    ignore: [...settings.ignore],
    recall: { model: settings.recall.model },
  };
}

/** The `initializationOptions` this client sends: the server settings, plus
 * `clientShowsCommandResults` — this extension shows every command's returned message itself
 * (`reportResult`), so the server must not also send it as `window/showMessage`. */
export interface InitializationOptions extends ServerSettings {
  clientShowsCommandResults: true;
}

export function initializationOptions(settings: MemlsSettings): InitializationOptions {
  return { ...serverSettings(settings), clientShowsCommandResults: true };
}
