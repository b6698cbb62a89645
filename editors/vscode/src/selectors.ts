// Document selector for the memls language client, kept free of the 'vscode' module so it can be
// unit-tested under plain node. Only memory files are handed to the server: the well-known file
// names anywhere, plus every Markdown file below a configured memory root.

import * as path from 'node:path';

/** Memory files recognised by name wherever they are (see PRODUCT.md §1 and §2). */
export const MEMORY_FILE_GLOBS: readonly string[] = [
  '**/MEMORY.md',
  '**/checkpoint-*.md',
  '**/.handoff.md',
  '**/LOG.md',
];

/** A document filter in the shape both vscode and vscode-languageclient accept. */
export interface FileFilter {
  scheme: 'file';
  pattern: string;
}

export interface SelectorContext {
  /** Absolute file-system paths of the open workspace folders (relative roots resolve there). */
  workspaceFolders?: readonly string[];
  /** Home directory for a leading `~` in a root. */
  userHome?: string;
  /** `process.platform`; decides how paths are parsed (tests can ask for win32 on Linux). */
  platform?: string;
}

/** Makes a literal file-system path safe inside a VS Code glob. VS Code globs have no
 * backslash escape, so each special character is wrapped in a one-character class (`[*]`).
 * A `]` cannot be put in a class, so it becomes `?` (any one character but `/`). */
export function escapeGlob(literal: string): string {
  return literal.replace(/[*?[\]{}]/g, (c) => (c === ']' ? '?' : `[${c}]`));
}

function pathApi(platform: string | undefined): path.PlatformPath {
  return platform === 'win32' ? path.win32 : path.posix;
}

/** Resolves one configured root to absolute directories: absolute roots as they are, `~` against
 * the home directory, relative roots against every workspace folder (none when no folder is open). */
export function resolveRoot(root: string, ctx: SelectorContext = {}): string[] {
  const p = pathApi(ctx.platform);
  let r = root.trim();
  if (r === '') {
    return [];
  }
  if (ctx.userHome !== undefined && (r === '~' || r.startsWith('~/') || r.startsWith('~\\'))) {
    r = p.join(ctx.userHome, r.slice(1));
  }
  if (p.isAbsolute(r)) {
    return [p.normalize(r)];
  }
  return (ctx.workspaceFolders ?? []).map((folder) => p.resolve(folder, r));
}

/** Glob that selects every Markdown file below an absolute root directory. A Windows drive
 * letter is lower-cased because VS Code matches patterns against `Uri.fsPath`, which does so. */
export function rootPattern(rootDir: string): string {
  let base = rootDir.replace(/\\/g, '/');
  if (/^[A-Za-z]:\//.test(base)) {
    base = base[0].toLowerCase() + base.slice(1);
  }
  while (base.length > 1 && base.endsWith('/')) {
    base = base.slice(0, -1);
  }
  const prefix = base === '/' ? '' : escapeGlob(base);
  return `${prefix}/**/*.md`;
}

/** Globs for the topic files beside a found `MEMORY.md` or `LOG.md` (absolute paths): every
 * `*.md` in its folder and in that folder's `memory/`, not below (a project's README and docs
 * deeper down are not memory). Without these, topic files outside configured roots would get
 * no code lens, hover or rename. */
export function discoveredPatterns(markerFiles: readonly string[], platform?: string): string[] {
  const p = pathApi(platform);
  const out: string[] = [];
  for (const file of markerFiles) {
    if (typeof file !== 'string' || file === '') {
      continue;
    }
    const folder = rootPattern(p.dirname(file)).replace(/\/\*\*\/\*\.md$/, '');
    for (const pattern of [`${folder}/*.md`, `${folder}/memory/*.md`]) {
      if (!out.includes(pattern)) {
        out.push(pattern);
      }
    }
  }
  return out;
}

/** The language client's document selector: memory file names on disk plus `<root>/**\/*.md`
 * for each configured root and the `discovered` globs, without duplicates. */
export function buildDocumentSelector(
  roots: readonly unknown[],
  ctx: SelectorContext = {},
  discovered: readonly string[] = [],
): FileFilter[] {
  const patterns: string[] = [...MEMORY_FILE_GLOBS];
  for (const root of roots) {
    if (typeof root !== 'string') {
      continue;
    }
    for (const dir of resolveRoot(root, ctx)) {
      const pattern = rootPattern(dir);
      if (!patterns.includes(pattern)) {
        patterns.push(pattern);
      }
    }
  }
  for (const pattern of discovered) {
    if (!patterns.includes(pattern)) {
      patterns.push(pattern);
    }
  }
  return patterns.map((pattern) => ({ scheme: 'file', pattern }));
}
