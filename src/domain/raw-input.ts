/**
 * Checks on raw input bytes, before anything parses them (CONTRACT.md, "Text and structure limits"): a body is valid
 * UTF-8 and nested at most 32 levels. The nesting is counted on the bytes, so a hostile body never reaches a
 * recursive parser, validator or serializer.
 */
export const MAX_JSON_DEPTH = 32;
export const NOT_UTF8 = 'must be valid UTF-8';
export const TOO_DEEP = `must be nested at most ${MAX_JSON_DEPTH} levels deep`;
export const NOT_PERCENT_UTF8 = 'must be valid percent-encoded UTF-8';

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** The text of UTF-8 bytes (a leading BOM dropped), or null when they are not valid UTF-8. */
export function decodeUtf8(bytes: Uint8Array): string | null {
  try {
    return utf8.decode(bytes);
  } catch {
    return null;
  }
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_ARRAY = 0x5b;
const OPEN_OBJECT = 0x7b;
const CLOSE_ARRAY = 0x5d;
const CLOSE_OBJECT = 0x7d;

/**
 * Whether JSON text (as UTF-8 bytes or a string) opens more than `max` arrays/objects inside one another. Brackets
 * inside strings do not count; malformed JSON is left for the parser to refuse. Linear, no recursion.
 */
export function jsonDeeperThan(json: Uint8Array | string, max = MAX_JSON_DEPTH): boolean {
  const at = typeof json === 'string' ? (i: number) => json.charCodeAt(i) : (i: number) => json[i];
  let depth = 0;
  let inString = false;
  for (let i = 0; i < json.length; i++) {
    const c = at(i);
    if (inString) {
      if (c === BACKSLASH) i++;
      else if (c === QUOTE) inString = false;
    } else if (c === QUOTE) inString = true;
    else if (c === OPEN_ARRAY || c === OPEN_OBJECT) {
      if (++depth > max) return true;
    } else if (c === CLOSE_ARRAY || c === CLOSE_OBJECT) depth--;
  }
  return false;
}

/** decodeURIComponent, or null when the percent-encoding is malformed or not UTF-8. */
export function percentDecode(s: string): string | null {
  try {
    return decodeURIComponent(s);
  } catch {
    return null;
  }
}
