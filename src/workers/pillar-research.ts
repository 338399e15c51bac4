import type { Knex } from 'knex';
import { handle } from '../../commands/handle';
import { type Candidate, decideRecordCandidates } from '../../commands/knowledge/facts';
import { Knowledge, knowledgeStream } from '../../commands/knowledge/knowledge';
import { decidePillarResearched } from '../../commands/knowledge/pillars';
import { isDomainError } from '../domain/errors';
import { type EventData, type EventOf, exhaustive } from '../domain/events';
import { deterministicId } from '../domain/ids';
import { createSafeFetcher, type Outbound } from '../net/safe-fetch';
import type { CommandContext } from '../../commands/handle';
import type { JobSpec, JobStep, StepContext } from './jobs';
import { getPillar } from '../../queries/knowledge/knowledge';
import { entitySpans } from '../../queries/observations/list';
import { latestAnswerTexts, trackedEntities } from '../../queries/responses/list';
import { websiteById } from '../../queries/websites/websites';

/** The research of a new pillar: candidate facts from the website's answers and its own pages, recorded pending (rules: docs/analysis.md#pillar-research) */

export const RESEARCH_LIMITS = { answers: 200, fromAnswers: 30, fromAnalysis: 20, pages: 5, fromSite: 30, sentence: { min: 20, max: 400 } };

const STOPWORDS = new Set(
  'the and for with that this from are was were has have had its our your their about into over under than then them they what when where which while who why how not but all any can our out use using per via also more most such only own same very just www com http https'.split(
    ' ',
  ),
);

/** A word's crude stem: lower case, a plural or -ing/-ed ending dropped, so "prices" meets "price" and "pricing". */
export function stem(word: string): string {
  let w = word.toLowerCase();
  for (const end of ['ings', 'ing', 'ies', 'es', 'ed', 's', 'e']) {
    if (w.length - end.length >= 4 && w.endsWith(end)) {
      w = w.slice(0, -end.length);
      break;
    }
  }
  return w;
}

const words = (text: string) => text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];

/** The stems a pillar is about: the words of its name and description, without the common ones. */
export function pillarTerms(name: string, description: string): Set<string> {
  return new Set(
    words(`${name} ${description}`)
      .filter((w) => w.length >= 3 && !STOPWORDS.has(w))
      .map(stem),
  );
}

export const mentionsTerm = (sentence: string, terms: ReadonlySet<string>) => words(sentence).some((w) => terms.has(stem(w)));

/** Whether a sentence names the brand: one of its names as whole words, case-insensitively. */
export function namesBrand(sentence: string, brand: readonly string[]): boolean {
  const s = ` ${words(sentence).join(' ')} `;
  return brand.some((b) => {
    const w = words(b).join(' ');
    return w.length > 0 && s.includes(` ${w} `);
  });
}

/** The sentences of a text (markdown list marks and emphasis dropped), of a length a fact can have. */
export function sentences(text: string): string[] {
  return text
    .split(/(?<=[.!?])\s+|\n+/)
    .map((s) =>
      s
        .replace(/^[\s>#*\-+\d.)]+/, '')
        .replace(/[*_`]+/g, '')
        .replace(/\s+/g, ' ')
        .trim(),
    )
    .filter((s) => s.length >= RESEARCH_LIMITS.sentence.min && s.length <= RESEARCH_LIMITS.sentence.max && /[\p{L}]/u.test(s));
}

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: ' ', '#39': "'" };

/** The visible text of an HTML page, block elements as line breaks. */
export function pageText(html: string): string {
  return html
    .replace(/<(script|style|noscript|template|svg|head|nav|header|footer|form)\b[\s\S]*?<\/\1\s*>/gi, ' ')
    .replace(/<!--[\s\S]*?-->/g, ' ')
    .replace(/<\/?(p|div|li|h[1-6]|br|tr|section|article|header|footer|ul|ol|main|nav|td|th|blockquote)\b[^>]*>/gi, '\n')
    .replace(/<[^>]+>/g, ' ')
    .replace(/&(#\d+|#x[0-9a-f]+|[a-z]+);/gi, (m, e: string) => {
      if (e.startsWith('#x') || e.startsWith('#X')) return String.fromCodePoint(Number.parseInt(e.slice(2), 16));
      if (e.startsWith('#') && e !== '#39') return String.fromCodePoint(Number(e.slice(1)));
      return ENTITIES[e.toLowerCase()] ?? m;
    });
}

/** Same-origin links of a page whose address or anchor text names a pillar term (absolute, without fragments). */
export function pillarLinks(html: string, base: string, terms: ReadonlySet<string>): string[] {
  const origin = new URL(base).origin;
  const out: string[] = [];
  for (const m of html.matchAll(/<a\b[^>]*?href\s*=\s*["']([^"']+)["'][^>]*>([\s\S]*?)<\/a>/gi)) {
    let url: URL;
    try {
      url = new URL(m[1], base);
    } catch {
      continue;
    }
    url.hash = '';
    if (url.origin !== origin || (url.protocol !== 'http:' && url.protocol !== 'https:')) continue;
    const label = `${decodeURIComponent(url.pathname).replace(/[-_/]+/g, ' ')} ${pageText(m[2])}`;
    if (mentionsTerm(label, terms) && !out.includes(url.href) && url.href !== new URL(base).href) out.push(url.href);
  }
  return out;
}

interface ResearchState {
  requested: EventData<'PillarResearchRequested'> | null;
  done: Set<string>;
}

interface PillarRow {
  name: string;
  description: string;
}

async function pillarOf(db: Knex, websiteId: string, pillarId: string): Promise<PillarRow | undefined> {
  return getPillar(db, websiteId, pillarId);
}

/** The brand's names: its entity's name and identifiers, else the website's name. */
async function brandNames(db: Knex, websiteId: string): Promise<{ names: string[]; entityId: string | null; url: string }> {
  const site = (await websiteById(db, websiteId))!;
  const self = (await trackedEntities(db, websiteId)).find((e) => e.is_self);
  const names = [...new Set([site.name, ...(self ? [self.name, ...(self.identifiers ?? [])] : [])].filter((n) => n.trim()))];
  return { names, entityId: self?.id ?? null, url: site.url };
}

async function record(ctx: CommandContext, websiteId: string, candidates: Candidate[]): Promise<number> {
  if (!candidates.length) return 0;
  const h = await handle(ctx, knowledgeStream(websiteId), Knowledge, (s) => decideRecordCandidates(s, websiteId, candidates));
  if (isDomainError(h)) throw new Error(h.message);
  return h.result.recorded;
}

type Found = Omit<Candidate, 'fact_id' | 'pillar_id' | 'job_id'> & { key: string };

function candidatesOf(jobId: string, pillarId: string, found: Found[]): Candidate[] {
  return found.map(({ key, ...f }) => ({ ...f, fact_id: deterministicId('pillar-fact', jobId, key), pillar_id: pillarId, job_id: jobId }));
}

/** Sentences of the website's latest answers that name the brand and the pillar, and the brand's observations about it. */
async function fromAnswers(db: Knex, websiteId: string, terms: ReadonlySet<string>): Promise<Found[]> {
  const brand = await brandNames(db, websiteId);
  const answers = await latestAnswerTexts(db, websiteId, RESEARCH_LIMITS.answers);
  const out: Found[] = [];
  for (const a of answers) {
    sentences(a.text).forEach((s, i) => {
      if (out.length >= RESEARCH_LIMITS.fromAnswers || !namesBrand(s, brand.names) || !mentionsTerm(s, terms)) return;
      out.push({
        key: `answer ${a.id} ${i}`,
        text: s,
        source_url: null,
        source_quote: s,
        confidence: 'medium',
        source_type: 'ai_response',
        response_id: a.id,
      });
    });
    if (out.length >= RESEARCH_LIMITS.fromAnswers) break;
  }
  if (brand.entityId) {
    const spans = await entitySpans(db, websiteId, brand.entityId, RESEARCH_LIMITS.answers);
    let n = 0;
    for (const o of spans) {
      const span = o.text_span.replace(/\s+/g, ' ').trim();
      if (n >= RESEARCH_LIMITS.fromAnalysis || span.length < RESEARCH_LIMITS.sentence.min || span.length > RESEARCH_LIMITS.sentence.max) continue;
      if (!mentionsTerm(span, terms)) continue;
      out.push({
        key: `observation ${o.id}`,
        text: span,
        source_url: null,
        source_quote: span,
        confidence: 'low',
        source_type: 'oracle',
        response_id: o.response_id,
      });
      n++;
    }
  }
  return out;
}

/** Sentences of the website's own pages (home, and pages it links whose link names the pillar) that name the pillar. */
async function fromSite(outbound: Outbound, siteUrl: string, terms: ReadonlySet<string>): Promise<Found[]> {
  const home = siteUrl.startsWith('http://') || siteUrl.startsWith('https://') ? siteUrl : `https://${siteUrl}`;
  const get = async (url: string): Promise<string | null> => {
    try {
      const r = await outbound.fetch(url, { timeoutMs: 10_000, maxBytes: 1024 * 1024 });
      return r.status >= 200 && r.status < 300 ? r.body : null;
    } catch {
      return null;
    }
  };
  const first = await get(home);
  if (first === null) return [];
  const pages: [string, string][] = [[home, first]];
  for (const link of pillarLinks(first, home, terms).slice(0, RESEARCH_LIMITS.pages - 1)) {
    const body = await get(link);
    if (body !== null) pages.push([link, body]);
  }
  const out: Found[] = [];
  for (const [url, html] of pages) {
    for (const s of sentences(pageText(html))) {
      if (out.length >= RESEARCH_LIMITS.fromSite) return out;
      // a statement, not a menu entry or a heading
      if (!/[.!?]$/.test(s) || !mentionsTerm(s, terms)) continue;
      out.push({ key: `site ${url} ${s}`, text: s, source_url: url, source_quote: s, confidence: 'high', source_type: 'site', response_id: null });
    }
  }
  return out;
}

export interface PillarResearchOptions {
  /** how the website's pages are fetched (default: the safe fetcher; tests reach a local fixture server) */
  outbound?: Outbound;
}

type ResearchEvent = EventOf<'PillarResearchRequested' | 'PillarResearchStepDone'>;

export function pillarResearchJob(options: PillarResearchOptions = {}): JobSpec<ResearchState, ResearchEvent> {
  const outbound = options.outbound ?? { fetch: createSafeFetcher() };
  const stepDone = (jobId: string, step: string, facts: number) => ({
    type: 'PillarResearchStepDone' as const,
    data: { job_id: jobId, step, facts },
  });
  const collect =
    (step: 'answers' | 'site') =>
    async ({ jobId, state, command, db }: StepContext<ResearchState>) => {
      const r = state.requested!;
      const pillar = await pillarOf(db, r.website_id, r.pillar_id);
      if (!pillar) throw new Error(`pillar ${r.pillar_id} is not in the read model yet`);
      const terms = pillarTerms(pillar.name, pillar.description);
      const found =
        step === 'answers' ? await fromAnswers(db, r.website_id, terms) : await fromSite(outbound, (await brandNames(db, r.website_id)).url, terms);
      const n = await record(command, r.website_id, candidatesOf(jobId, r.pillar_id, found));
      return { events: [stepDone(jobId, step, n)] };
    };
  return {
    kind: 'pillar_research',
    aggregate: {
      types: ['PillarResearchRequested', 'PillarResearchStepDone'],
      initial: () => ({ requested: null, done: new Set() }),
      evolve(s, e) {
        switch (e.type) {
          case 'PillarResearchRequested':
            return { ...s, requested: e.data };
          case 'PillarResearchStepDone':
            return { ...s, done: new Set([...s.done, e.data.step]) };
          default:
            return exhaustive(e, s);
        }
      },
    },
    next(s): JobStep<ResearchState> | null {
      if (!s.requested) return null;
      if (!s.done.has('answers')) return { name: 'answers', run: collect('answers') };
      if (!s.done.has('site')) return { name: 'site', run: collect('site') };
      if (s.done.has('finish')) return null;
      return {
        name: 'finish',
        async run({ jobId, state, command }) {
          const r = state.requested!;
          let facts_found = 0;
          const h = await handle(command, knowledgeStream(r.website_id), Knowledge, (s) => {
            facts_found = [...s.facts.values()].filter((f) => f.pillar_id === r.pillar_id && !f.archived && f.duplicate_of === null).length;
            return decidePillarResearched(s, { pillar_id: r.pillar_id, job_id: jobId, facts_found });
          });
          if (isDomainError(h)) return { failed: { error_kind: 'pillar_missing', message: h.message } };
          return { events: [stepDone(jobId, 'finish', facts_found)], succeeded: true };
        },
      };
    },
  };
}
