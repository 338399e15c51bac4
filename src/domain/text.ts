// every cut of text goes through cutText: a .slice can end inside a surrogate pair, and Postgres refuses a lone surrogate

const graphemes = new Intl.Segmenter(undefined, { granularity: 'grapheme' });
/** How far back a cut looks for the start of the grapheme cluster it falls in (segmenting the whole text would cost O(n)). */
const LOOK_BACK = 256;

const isHigh = (c: number) => c >= 0xd800 && c <= 0xdbff;
const isLow = (c: number) => c >= 0xdc00 && c <= 0xdfff;

/**
 * The longest prefix of `text` of at most `max` UTF-16 code units (the unit of `String.length` and of every length
 * limit of the code base) that ends between two characters as a reader sees them: never inside a surrogate pair, and
 * not inside a grapheme cluster (an emoji sequence, a flag, a letter with its combining marks) unless that cluster
 * is longer than the cut can look back, or the text's first cluster is already longer than `max`: then it ends
 * between two code points.
 */
export function cutText(text: string, max: number): string {
  if (text.length <= max) return text;
  if (max <= 0) return '';
  let from = Math.max(0, max - LOOK_BACK);
  if (from > 0 && isLow(text.charCodeAt(from)) && isHigh(text.charCodeAt(from - 1))) from--;
  // a boundary at `max` depends on what comes before it and on the code point that starts there (two units at most)
  const at = from + graphemes.segment(text.slice(from, max + 2)).containing(max - from)!.index;
  if (at > from) return text.slice(0, at);
  return text.slice(0, isHigh(text.charCodeAt(max - 1)) ? max - 1 : max);
}
