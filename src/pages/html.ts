/**
 * Escaping HTML templates: html`<p>${name}</p>` escapes every interpolated value; only an Html value (another
 * html`` template, or trustedHtml() for markup the code itself wrote) goes in as it is.
 *
 * - text and quoted attribute values: & < > " ' escaped; control characters and bidi overrides removed (they
 *   would let a name reorder or hide the text around it), lone surrogates replaced;
 * - URL attributes (href, src, action, …): a scheme other than http, https or mailto (javascript:, data:, …)
 *   becomes `about:invalid#refused`;
 * - refused (an Error the first time the template renders): an unquoted attribute value; a value in a style,
 *   srcset or on* attribute, inside <script> or <style>, or a string where attributes are written: escaping
 *   cannot make those safe.
 */

const BRAND = Symbol('aivis.html');

export class Html {
  readonly [BRAND] = true;
  constructor(readonly value: string) {}
  toString(): string {
    return this.value;
  }
}

export const isHtml = (v: unknown): v is Html => v instanceof Html;

/** Markup the code wrote itself (never user data): inserted without escaping. */
export const trustedHtml = (markup: string): Html => new Html(markup);

export type HtmlValue = Html | string | number | boolean | null | undefined | readonly HtmlValue[];

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
// C0 controls but tab, newline and carriage return; DEL and C1; bidi embeddings, overrides and isolates
const UNSAFE_CHARS = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g;
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

/** Text as it may appear in a page: unsafe characters removed, lone surrogates replaced. */
export const cleanText = (s: string): string => s.replace(UNSAFE_CHARS, '').replace(LONE_SURROGATE, '\ufffd');

/** Escapes text for an HTML text node or a quoted attribute value. */
export const escapeHtml = (s: string): string => cleanText(s).replace(/[&<>"']/g, (c) => ESCAPES[c]);

const SAFE_SCHEMES = new Set(['http:', 'https:', 'mailto:']);
export const REFUSED_URL = 'about:invalid#refused';

/**
 * A URL fit for href/src: relative URLs and http, https or mailto; anything else (javascript:, data:, vbscript:,
 * however it is spelled with case, spaces or control characters) gives REFUSED_URL.
 */
export function safeUrl(url: string): string {
  // what a browser's URL parser ignores: surrounding C0 controls and spaces, tabs and newlines anywhere
  const s = url.replace(/[\t\n\r]/g, '').replace(/^[\u0000-\u0020]+|[\u0000-\u0020]+$/g, '');
  const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(s);
  if (scheme && !SAFE_SCHEMES.has(`${scheme[1].toLowerCase()}:`)) return REFUSED_URL;
  // a colon before the first / ? or # that the scheme pattern did not take (e.g. "1javascript:") is a bad scheme
  if (!scheme && /^[^/?#]*:/.test(s)) return REFUSED_URL;
  return s;
}

const URL_ATTRIBUTES = new Set(['href', 'src', 'action', 'formaction', 'xlink:href', 'poster', 'cite', 'background', 'ping']);
const FORBIDDEN_ATTRIBUTE = /^(?:style|srcset|on[a-z]+)$/;

/** Where an interpolation sits: text, a quoted attribute value, a URL attribute's value, or inside a tag itself. */
type Context = 'text' | 'attr' | 'url' | 'tag';

/** The attribute whose quoted value the end of `tail` (from a tag's `<`) is in, or null outside any value. */
function openAttribute(tail: string): string | null {
  let quote: string | null = null;
  let start = 0;
  for (let i = 0; i < tail.length; i++) {
    const c = tail[i];
    if (quote) {
      if (c === quote) quote = null;
    } else if (c === '"' || c === "'") {
      quote = c;
      start = i;
    }
  }
  if (!quote) return null;
  return (/([^\s"'<>/=]+)\s*=\s*$/.exec(tail.slice(0, start))?.[1] ?? '').toLowerCase();
}

function render(v: HtmlValue, context: Context): string {
  if (v === null || v === undefined || v === false || v === '') return '';
  if (v instanceof Html) return v.value;
  if (Array.isArray(v)) return v.map((x) => render(x, context)).join('');
  if (context === 'tag') throw new TypeError('html: only an Html value may be interpolated inside a tag (quote attribute values)');
  if (typeof v === 'number') {
    if (!Number.isFinite(v)) throw new TypeError(`html: ${v} is not a number a page can show`);
    return String(v);
  }
  const s = String(v);
  return escapeHtml(context === 'url' ? safeUrl(s) : s);
}

/** Where each interpolation of a template sits, worked out once per template (a template's strings are one object). */
const checked = new WeakMap<TemplateStringsArray, Context[]>();

function contexts(strings: TemplateStringsArray): Context[] {
  let found = checked.get(strings);
  if (found) return found;
  found = [];
  let before = '';
  for (let i = 0; i < strings.length - 1; i++) {
    before += strings[i];
    const lower = before.toLowerCase();
    for (const tag of ['script', 'style']) {
      if (lower.lastIndexOf(`<${tag}`) > lower.lastIndexOf(`</${tag}`)) throw new Error(`html: no value may be interpolated inside <${tag}>`);
    }
    const open = before.lastIndexOf('<');
    let context: Context = 'text';
    if (open > before.lastIndexOf('>')) {
      const tail = before.slice(open);
      const attribute = openAttribute(tail);
      if (attribute === null) {
        if (/=\s*$/.test(tail)) throw new Error(`html: quote the attribute value before \${…} (after ${JSON.stringify(tail.slice(-40))})`);
        context = 'tag';
      } else if (FORBIDDEN_ATTRIBUTE.test(attribute)) {
        throw new Error(`html: no value may be interpolated in a style, srcset or event handler attribute (${attribute})`);
      } else context = URL_ATTRIBUTES.has(attribute) && /["']$/.test(tail) ? 'url' : 'attr';
    }
    found.push(context);
    // stands for the value, so that the next interpolation's context reads right (a value is never markup here)
    before += context === 'text' ? '' : 'x';
  }
  checked.set(strings, found);
  return found;
}

/** The escaping template tag. */
export function html(strings: TemplateStringsArray, ...values: HtmlValue[]): Html {
  const at = contexts(strings);
  let out = strings[0];
  for (let i = 0; i < values.length; i++) out += render(values[i], at[i]) + strings[i + 1];
  return new Html(out);
}

/** Joins Html values (a list rendered by map) with an optional separator. */
export const joinHtml = (parts: readonly HtmlValue[], separator: HtmlValue = ''): Html =>
  new Html(parts.map((p) => render(p, 'text')).join(render(separator, 'text')));
