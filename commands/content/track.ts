import { z } from 'zod';
import { type ContentFieldValue, type ContentType, contentStream, contentUrlsStream, contentSheetsStream } from '../../src/domain/content';
import { type DomainError, invalid, isDomainError } from '../../src/domain/errors';
import { deterministicId, newId } from '../../src/domain/ids';
import { label, text, Uuid, WebsiteId } from '../../src/domain/schemas';
import { isHostWithinDomain, domainOf, hostOf, normalizeUrl } from '../../src/domain/urls';
import { appendMany, maxPosition, type Position } from '../../src/eventstore/port';
import { type CommandContext, type Decision, handle, load, newEventsFor } from '../handle';
import { FieldEntry, resolveFields } from './fields';
import { ContentSheets, type ContentSheetsState, type SheetState } from './sheets';
import { ContentUrls, type ContentUrlsState, type UrlClaim } from './urls';

/** URLs per call (spec, Limits: content track). */
export const MAX_TRACK_URLS = 500;
const MAX_FIELDS_PER_ROW = 100;

export const TrackRow = z.strictObject({
  url: text().max(2048, 'must be at most 2048 characters').describe('The page URL, with or without the protocol (stored without it)'),
  title: label(500).optional().describe('Overrides the title derived from the URL slug'),
  fields: z
    .array(FieldEntry)
    .max(MAX_FIELDS_PER_ROW, `must have at most ${MAX_FIELDS_PER_ROW} items`)
    .optional()
    .describe('Custom column values {column, value} of the destination tab'),
});
export const TrackContent = z.strictObject({
  website_id: WebsiteId,
  urls: z
    .array(TrackRow, { error: 'must be an array of {url, title?, fields?}' })
    .min(1, `must have between 1 and ${MAX_TRACK_URLS} items`)
    .max(MAX_TRACK_URLS, `must have between 1 and ${MAX_TRACK_URLS} items`)
    .describe(`1 to ${MAX_TRACK_URLS} pages to track; variants of one URL (tracking parameters included) collapse, the first wins`),
  sheet_id: Uuid.nullable().optional().describe('The tab the rows go to; a view-type tab or none: the shared pool'),
});
export type TrackContent = z.infer<typeof TrackContent>;

/** A row as it will be stored, once its URL and fields are checked. */
interface PreparedRow {
  /** index in the request */
  index: number;
  /** as sent, trimmed, without the protocol */
  url: string;
  normalized_url: string;
  title: string;
  type: ContentType;
  values: Record<string, ContentFieldValue>;
}

/** The protocol stripped (spec, tracking rule 1): `https://a.com/x` and `//a.com/x` store as `a.com/x`. */
export const stripProtocol = (url: string) => url.trim().replace(/^(?:https?:)?\/\//i, '');

/** The default title: the last path segment made readable, or the host for a root URL. */
export function titleFromUrl(normalized: string): string {
  const path = normalized.replace(/[?#].*$/, '');
  const slash = path.indexOf('/');
  const host = slash === -1 ? path : path.slice(0, slash);
  const segments = (slash === -1 ? '' : path.slice(slash + 1)).split('/').filter((s) => s !== '');
  const last = segments.at(-1);
  if (!last) return host;
  let s = last;
  try {
    s = decodeURIComponent(last);
  } catch {}
  s = s
    .replace(/\.(html?|php|aspx?|jsp)$/i, '')
    .replace(/[-_+]+/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
  if (s === '') return host;
  return s.charAt(0).toUpperCase() + s.slice(1);
}

/** The destination of the rows: a sheet-type tab, or the shared pool (null) for none or a view-type tab. */
export function destinationOf(sheets: ContentSheetsState, sheetId: string | null | undefined): SheetState | null | DomainError {
  if (sheetId === undefined || sheetId === null) return null;
  const sheet = sheets.sheets.get(sheetId.toLowerCase());
  if (!sheet) return invalid('sheet_id: no tab of this website has this id');
  return sheet.type === 'view' ? null : sheet;
}

/**
 * Every row checked (spec, tracking rules 1, 3, 4, 5): URL normalized (400 naming the row otherwise), duplicates
 * (tracking-parameter variants included) collapsed with the first winning, fields checked against the destination
 * tab. One bad row: 400 naming it, nothing tracked.
 */
export function prepareRows(input: TrackContent, websiteUrl: string, destination: SheetState | null): PreparedRow[] | DomainError {
  const own = domainOf(websiteUrl);
  const seen = new Set<string>();
  const rows: PreparedRow[] = [];
  // a working copy of the tab: options the earlier rows create are known (case-insensitively) to the later ones
  const working: SheetState | null = destination && { ...destination, columns: destination.columns.map((c) => ({ ...c, options: [...c.options] })) };
  for (let i = 0; i < input.urls.length; i++) {
    const r = input.urls[i];
    let normalized: string;
    try {
      normalized = normalizeUrl(r.url);
    } catch (err) {
      return invalid(`urls[${i}].url: ${(err as Error).message}`);
    }
    const resolved = resolveFields(working, r.fields ?? [], `urls[${i}].fields`);
    if (typeof resolved === 'string') return invalid(resolved);
    if (working) {
      for (const [columnId, labels] of resolved.newOptions) working.columns.find((c) => c.column_id === columnId)?.options.push(...labels);
    }
    if (seen.has(normalized)) continue;
    seen.add(normalized);
    rows.push({
      index: i,
      url: stripProtocol(r.url),
      normalized_url: normalized,
      title: r.title ?? titleFromUrl(normalized),
      type: isHostWithinDomain(hostOf(normalized), own) ? 'imported' : 'external',
      values: resolved.values,
    });
  }
  return rows;
}

/** What the registry decides for one row. */
export type RowOutcome = { kind: 'created'; content_id: string } | { kind: 'skipped'; claim: UrlClaim } | { kind: 'adopt'; claim: UrlClaim };

/**
 * On the website's URL registry: a URL nobody holds is claimed for a new item; one held by a live item is a skip
 * (spec, tracking rule 2: whatever its type, wherever its tab); one held by an item that is gone (`dead`: deleted
 * before its URL was released) is claimed anew; one held by an item whose stream was never written (`orphans`: a
 * crash between the claim and the item) is adopted by this call.
 */
export function decideClaims(
  s: ContentUrlsState,
  cmd: {
    website_id: string;
    sheet_id: string | null;
    rows: { normalized_url: string; type: ContentType; content_id: string }[];
    dead: ReadonlySet<string>;
    orphans: ReadonlySet<string>;
  },
): Decision<RowOutcome[]> {
  const claims: { content_id: string; normalized_url: string; type: ContentType; sheet_id: string | null }[] = [];
  const releases: { content_id: string }[] = [];
  const outcomes: RowOutcome[] = cmd.rows.map((r) => {
    const held = s.byUrl.get(r.normalized_url);
    if (held && cmd.orphans.has(held.content_id)) return { kind: 'adopt', claim: held };
    if (held && !cmd.dead.has(held.content_id)) return { kind: 'skipped', claim: held };
    if (held) releases.push({ content_id: held.content_id });
    claims.push({ content_id: r.content_id, normalized_url: r.normalized_url, type: r.type, sheet_id: cmd.sheet_id });
    return { kind: 'created', content_id: r.content_id };
  });
  return {
    events: [
      ...releases.map((x) => ({ type: 'ContentUrlReleased' as const, data: { website_id: cmd.website_id, ...x } })),
      ...(claims.length ? [{ type: 'ContentUrlsClaimed' as const, data: { website_id: cmd.website_id, claims } }] : []),
    ],
    result: outcomes,
  };
}

/** Adds the multi-select options the new rows use that the columns lack (case-insensitively); the columns' options after. */
export function decideOptions(
  s: ContentSheetsState,
  cmd: { website_id: string; sheet_id: string; wanted: Map<string, string[]> },
): Decision<Map<string, Map<string, string>>> {
  const sheet = s.sheets.get(cmd.sheet_id);
  const canonical = new Map<string, Map<string, string>>();
  const events: Decision<unknown>['events'] = [];
  for (const c of sheet?.columns ?? []) {
    const known = new Map(c.options.map((o) => [o.toLowerCase(), o]));
    const added: string[] = [];
    for (const l of cmd.wanted.get(c.column_id) ?? []) {
      if (known.has(l.toLowerCase())) continue;
      known.set(l.toLowerCase(), l);
      added.push(l);
    }
    canonical.set(c.column_id, known);
    if (added.length)
      events.push({
        type: 'ContentColumnOptionsAdded',
        data: { website_id: cmd.website_id, sheet_id: cmd.sheet_id, column_id: c.column_id, options: added },
      });
  }
  return { events, result: canonical };
}

export interface TrackedRow {
  content_id: string;
  url: string;
  sheet_id: string | null;
}
export interface TrackResult {
  created: TrackedRow[];
  skipped: (TrackedRow & { type: ContentType })[];
}

/** Which of the claimed items are gone (deleted) or were never written (orphans): read from their own streams. */
export interface ItemProbe {
  /** ids among `ids` the read model lists as live items */
  live(ids: string[]): Promise<Set<string>>;
}

/** The event id of an item's ContentTracked: a second writer of the same item (an adoption racing the claimer) writes nothing. */
const trackedEventId = (contentId: string) => deterministicId('content-tracked', contentId);

/**
 * Tracks pages (POST /api/v1/content/track): rows checked, URLs decided on the website's registry (one winner per
 * URL among racing calls), new multi-select options added on the tab's stream, then one ContentTracked per new item
 * on its own stream.
 */
export async function trackContent(
  ctx: CommandContext,
  input: TrackContent & { website_url: string },
  probe: ItemProbe,
): Promise<{ result: TrackResult; position: Position | null } | DomainError> {
  const websiteId = input.website_id;
  const sheets = (await load(ctx.store, contentSheetsStream(websiteId), ContentSheets)).state;
  const destination = destinationOf(sheets, input.sheet_id);
  if (isDomainError(destination)) return destination;
  const rows = prepareRows(input, input.website_url, destination);
  if (isDomainError(rows)) return rows;
  const sheetId = destination?.sheet_id ?? null;

  // claims of this call's URLs whose items the read model does not list: deleted, never written, or just created
  const registry = (await load(ctx.store, contentUrlsStream(websiteId), ContentUrls)).state;
  const held = [...new Set(rows.flatMap((r) => registry.byUrl.get(r.normalized_url)?.content_id ?? []))];
  const live = held.length ? await probe.live(held) : new Set<string>();
  const dead = new Set<string>();
  const orphans = new Set<string>();
  for (const id of held) {
    if (live.has(id)) continue;
    const events = await ctx.store.readStream(contentStream(id), { maxCount: 1000 });
    if (events.length === 0) orphans.add(id);
    else if (events.some((e) => e.type === 'ContentDeleted')) dead.add(id);
  }

  let position: Position | null = null;
  const claimed = await handle(ctx, contentUrlsStream(websiteId), ContentUrls, (s) =>
    decideClaims(s, {
      website_id: websiteId,
      sheet_id: sheetId,
      rows: rows.map((r) => ({ normalized_url: r.normalized_url, type: r.type, content_id: newId() })),
      dead,
      orphans,
    }),
  );
  if (isDomainError(claimed)) return claimed;
  position = claimed.position;
  const outcomes = claimed.result;

  // the options the new rows use, created on the tab (case-insensitively), and each value in the option's spelling
  const writes = rows.flatMap((r, i) => {
    const o = outcomes[i];
    if (o.kind === 'skipped') return [];
    return [
      { row: r, content_id: o.kind === 'created' ? o.content_id : o.claim.content_id, sheet_id: o.kind === 'created' ? sheetId : o.claim.sheet_id },
    ];
  });
  if (destination && writes.length) {
    const wanted = new Map<string, string[]>();
    for (const w of writes) {
      for (const c of destination.columns) {
        const v = w.row.values[c.column_id];
        if (c.type === 'multi_select' && Array.isArray(v)) wanted.set(c.column_id, [...(wanted.get(c.column_id) ?? []), ...v]);
      }
    }
    if (wanted.size) {
      const added = await handle(ctx, contentSheetsStream(websiteId), ContentSheets, (s) =>
        decideOptions(s, { website_id: websiteId, sheet_id: destination.sheet_id, wanted }),
      );
      if (isDomainError(added)) return added;
      if (added.position) position = added.position;
      for (const w of writes) {
        for (const [columnId, known] of added.result) {
          const v = w.row.values[columnId];
          if (Array.isArray(v)) w.row.values[columnId] = [...new Set(v.map((l) => known.get(l.toLowerCase()) ?? l))];
        }
      }
    }
  }

  // one item stream per new row, all in one go (one transaction where the store can: a reader sees every new item or
  // none); each append has its own outcome
  const appended = await appendMany(
    ctx.store,
    writes.map((w) => ({
      streamId: contentStream(w.content_id),
      expected: 'no_stream' as const,
      events: newEventsFor(ctx, [
        {
          id: trackedEventId(w.content_id),
          type: 'ContentTracked',
          data: {
            content_id: w.content_id,
            website_id: websiteId,
            url: w.row.url,
            normalized_url: w.row.normalized_url,
            type: w.row.type,
            title: w.row.title,
            sheet_id: w.sheet_id,
            ...(Object.keys(w.row.values).length ? { fields: w.row.values } : {}),
          },
        },
      ]),
    })),
  );
  const written = writes.map((w, i) => {
    const o = appended[i];
    if (o.ok) return { w, written: !o.result.noop, position: o.result.position };
    // an adoption lost to the claimer (or the other way round): the item exists, written by the other call
    if ((o.error as { kind?: string }).kind === 'wrong_expected_revision') return { w, written: false, position: null };
    throw o.error;
  });
  const result: TrackResult = { created: [], skipped: [] };
  const byIndex = new Map(written.map((x) => [x.w.row.index, x]));
  rows.forEach((r, i) => {
    const o = outcomes[i];
    const x = byIndex.get(r.index);
    if (x?.written) {
      result.created.push({ content_id: x.w.content_id, url: r.url, sheet_id: x.w.sheet_id });
      if (x.position) position = position ? maxPosition(position, x.position) : x.position;
      return;
    }
    const claim = o.kind === 'created' ? { content_id: o.content_id, type: r.type, sheet_id: sheetId } : o.claim;
    result.skipped.push({ content_id: claim.content_id, url: r.url, sheet_id: claim.sheet_id, type: claim.type });
  });
  return { result, position };
}
