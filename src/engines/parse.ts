/**
 * Defensive readers for provider bodies (anything may be missing or of the wrong type), the
 * citation list builder, and the request context every real adapter sends.
 */
import type { AnswerRequest, EngineLocation } from './port';
import { cutText } from '../domain/text';

export type Json = Record<string, unknown>;

export const isRecord = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
export const asArray = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
export const asString = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
export const asNumber = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);
export const get = (v: unknown, ...path: Array<string | number>): unknown => {
  let cur = v;
  for (const k of path) {
    if (typeof k === 'number') cur = Array.isArray(cur) ? cur[k] : undefined;
    else cur = isRecord(cur) ? cur[k] : undefined;
    if (cur === undefined) return undefined;
  }
  return cur;
};

/** Collects http(s) URLs in first-seen order, once each. */
export class UrlList {
  private readonly seen = new Set<string>();
  readonly urls: string[] = [];

  add(value: unknown): void {
    if (typeof value !== 'string') return;
    const s = value.trim();
    if (!/^https?:\/\//i.test(s) || this.seen.has(s)) return;
    try {
      new URL(s);
    } catch {
      return;
    }
    this.seen.add(s);
    this.urls.push(s);
  }
}

/** Non-empty strings, trimmed, each once in order (a provider's search queries). */
export function stringList(values: unknown[]): string[] {
  const out: string[] = [];
  for (const v of values) {
    const s = typeof v === 'string' ? v.trim() : '';
    if (s && !out.includes(s)) out.push(s);
  }
  return out;
}

let regionCodes: Map<string, string> | null = null;

/** An ISO 3166-1 alpha-2 code for a country given as a code or an English name; undefined when unknown. */
export function countryCode(country: string | undefined): string | undefined {
  if (!country) return undefined;
  const c = country.trim();
  if (/^[A-Za-z]{2}$/.test(c)) return c.toUpperCase() === 'UK' ? 'GB' : c.toUpperCase();
  if (!regionCodes) {
    regionCodes = new Map();
    const names = new Intl.DisplayNames(['en'], { type: 'region', fallback: 'none' });
    for (let a = 65; a <= 90; a++) {
      for (let b = 65; b <= 90; b++) {
        const code = String.fromCharCode(a, b);
        // skip deprecated codes (DD, UK, SU...) that name a country under a newer code
        if (Intl.getCanonicalLocales(`und-${code}`)[0] !== `und-${code}`) continue;
        const name = names.of(code);
        if (name && name !== code) regionCodes.set(name.toLowerCase(), code);
      }
    }
    for (const [alias, code] of [
      ['usa', 'US'],
      ['united states of america', 'US'],
      ['uk', 'GB'],
      ['great britain', 'GB'],
      ['england', 'GB'],
    ] as const) {
      regionCodes.set(alias, code);
    }
  }
  return regionCodes.get(c.toLowerCase());
}

export const locationText = (loc: EngineLocation): string =>
  [loc.city, loc.region, loc.country].filter((p): p is string => typeof p === 'string' && p.trim() !== '').join(', ');

/** The parts of a location a provider takes: country (ISO 3166-1 alpha-2), region and city, those known (none without a location). */
export function locationParts(loc: EngineLocation | undefined): Json {
  const parts: Json = {};
  const country = countryCode(loc?.country);
  if (country) parts.country = country;
  if (loc?.region) parts.region = loc.region;
  if (loc?.city) parts.city = loc.city;
  return parts;
}

/**
 * The system text real adapters send with the prompt: who asks and from where. Never the brand or
 * its competitors: the point is to see what the engine says unprompted.
 */
export function contextInstruction(req: AnswerRequest): string | undefined {
  const lines: string[] = [];
  if (req.location && locationText(req.location)) lines.push(`The user is located in ${locationText(req.location)}.`);
  if (req.persona?.name) {
    lines.push(`The user: ${req.persona.name}${req.persona.description ? ` (${req.persona.description})` : ''}.`);
  }
  return lines.length ? lines.join(' ') : undefined;
}

/** A short, single-line excerpt of an error body for a message. */
export const excerpt = (s: string, max = 300): string => {
  const one = s.replace(/\s+/g, ' ').trim();
  return one.length > max ? `${cutText(one, max)}…` : one;
};
