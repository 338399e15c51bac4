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
 * inside strings do not count; malformed JSON is left for the parser to refuse. Linear, no recursion: a string's
 * content is skipped with indexOf, so the scan costs about what JSON.parse does.
 */
export function jsonDeeperThan(json: Uint8Array | string, max = MAX_JSON_DEPTH): boolean {
  const bytes = typeof json === 'string' ? Buffer.from(json) : Buffer.from(json.buffer, json.byteOffset, json.byteLength);
  const n = bytes.length;
  let depth = 0;
  for (let i = 0; i < n; i++) {
    const c = bytes[i];
    if (c === QUOTE) {
      // the closing quote: the next one not escaped by an odd run of backslashes
      for (;;) {
        const q = bytes.indexOf(QUOTE, i + 1);
        if (q < 0) return false;
        let slashes = 0;
        while (bytes[q - 1 - slashes] === BACKSLASH) slashes++;
        i = q;
        if (slashes % 2 === 0) break;
      }
    } else if (c === OPEN_ARRAY || c === OPEN_OBJECT) {
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
