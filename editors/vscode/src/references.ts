// The arguments of the server's code lens command `memls.showReferences` (uri, position,
// locations — the shape VS Code's `editor.action.showReferences` takes), checked without the
// 'vscode' module so they can be unit-tested under plain node.

export interface LspPosition {
  line: number;
  character: number;
}

export interface LspLocation {
  uri: string;
  range: { start: LspPosition; end: LspPosition };
}

export interface ShowReferencesArgs {
  uri: string;
  position: LspPosition;
  locations: LspLocation[];
}

function isPosition(value: unknown): value is LspPosition {
  const p = value as LspPosition | undefined;
  return (
    typeof p === 'object' &&
    p !== null &&
    Number.isInteger(p.line) &&
    Number.isInteger(p.character) &&
    p.line >= 0 &&
    p.character >= 0
  );
}

function isLocation(value: unknown): value is LspLocation {
  const l = value as LspLocation | undefined;
  return (
    typeof l === 'object' &&
    l !== null &&
    typeof l.uri === 'string' &&
    typeof l.range === 'object' &&
    l.range !== null &&
    isPosition(l.range.start) &&
    isPosition(l.range.end)
  );
}

/** The command's arguments, or undefined when they are not (uri, position, locations);
 * malformed locations are dropped. */
export function parseShowReferences(args: readonly unknown[]): ShowReferencesArgs | undefined {
  const [uri, position, locations] = args;
  if (typeof uri !== 'string' || !isPosition(position) || !Array.isArray(locations)) {
    return undefined;
  }
  return { uri, position, locations: locations.filter(isLocation) };
}
