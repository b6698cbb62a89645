// The "Save checkpoint" editor flow's data, without the 'vscode' module so it can be
// unit-tested under plain node: the server's suggestion (`memls.checkpoint.suggest`), the
// Done items typed in one input box, the recently edited files, and the save's result.

export interface Suggestion {
  name: string | undefined;
  branch: string | undefined;
  exists: boolean;
  next: string;
  done: string[];
  files: string[];
}

const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);
const strings = (v: unknown): string[] =>
  Array.isArray(v) ? v.filter((s): s is string => typeof s === 'string' && s.trim() !== '') : [];

/** The suggestion a server sent, with anything malformed dropped (an older server sends
 * nothing: every field then has its empty value). */
export function parseSuggestion(raw: unknown): Suggestion {
  const r = (typeof raw === 'object' && raw !== null ? raw : {}) as Record<string, unknown>;
  return {
    name: str(r.name),
    branch: str(r.branch),
    exists: r.exists === true,
    next: str(r.next) ?? '',
    done: strings(r.done),
    files: strings(r.files),
  };
}

/** One input box holds every Done item, separated by `;`. */
export const DONE_SEPARATOR = '; ';

export function joinDone(items: readonly string[]): string {
  return items.map((i) => i.replace(/;/g, ',')).join(DONE_SEPARATOR);
}

export function splitDone(text: string): string[] {
  return text
    .split(';')
    .map((s) => s.trim())
    .filter((s) => s !== '');
}

/** A checkpoint name as the user may type it: no path separators. */
export function nameProblem(value: string): string | undefined {
  if (value.trim() === '') {
    return 'A checkpoint name is required (there is no git branch to name it after)';
  }
  return /[\\/]/.test(value) ? 'A checkpoint name cannot contain a path separator' : undefined;
}

export function nextActionProblem(value: string): string | undefined {
  return value.trim() === '' ? 'Say what to do next: whoever resumes starts here' : undefined;
}

/** Most recently edited first, each file once, at most `limit`. */
export class RecentFiles {
  private readonly paths: string[] = [];

  constructor(private readonly limit = 10) {}

  touch(path: string): void {
    const at = this.paths.indexOf(path);
    if (at >= 0) {
      this.paths.splice(at, 1);
    }
    this.paths.unshift(path);
    this.paths.length = Math.min(this.paths.length, this.limit);
  }

  list(): string[] {
    return [...this.paths];
  }
}

export interface SaveResult {
  message: string | undefined;
  checkpoint: string | undefined;
  index: string | undefined;
  indexBefore: string | undefined;
  indexDiff: string;
}

export function parseSaveResult(raw: unknown): SaveResult {
  const r = (typeof raw === 'object' && raw !== null ? raw : {}) as Record<string, unknown>;
  return {
    message: str(r.message),
    checkpoint: str(r.checkpoint),
    index: str(r.index),
    indexBefore: typeof r.index_before === 'string' ? r.index_before : undefined,
    indexDiff: typeof r.index_diff === 'string' ? r.index_diff : '',
  };
}
