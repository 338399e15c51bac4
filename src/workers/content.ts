import { type ContentPipeline, pipelineAggregate, versionId } from '../../commands/content/pipeline';
import { groundingFacts } from '../../queries/knowledge/grounding';
import { creditsCharged } from '../domain/credits';
import type { ModelId } from '../domain/models';
import { isEngineError } from '../engines/port';
import type { Engines } from '../engines/registry';
import { createWriter, type Writer, type WriterSubject, type WriterTask } from '../engines/writer';
import { createSafeFetcher, type SafeFetch, SafeFetchError } from '../net/safe-fetch';
import type { JobSpec, JobStep, StepEvent, StepOutcome } from './jobs';
import { cutText } from '../domain/text';

/** Credits per paid step (CreditsCharged kind content_generation); a revision is REVISION_CREDITS. */
export const GENERATION_CREDITS = { brief: 1, article: 4, review: 4 } as const;

/** The live page's text kept for the review (characters). */
export const MAX_PAGE_CHARS = 60_000;

export interface ContentJobOptions {
  engines: Engines;
  /** CONTENT_MODEL: the catalogue model that writes */
  model: ModelId;
  /** the outbound client optimize fetches live pages with (default: the safe fetcher) */
  fetch?: SafeFetch;
  now?: () => Date;
}

const subjectOf = (s: ContentPipeline): WriterSubject => {
  const r = s.request!;
  // an erased item's title reads as null; its job stops at the next step (deletedStep)
  return { title: r.title ?? '', type: r.type, topic_name: r.topic_name, prompts: r.prompts, brand: r.brand };
};

/** An engine failure: one a retry may cure is thrown (the message is delivered again), any other fails the job. */
async function writing<T>(run: () => Promise<T>, failed: (message: string) => StepOutcome): Promise<T | StepOutcome> {
  try {
    return await run();
  } catch (err) {
    if (isEngineError(err) && !err.retryable) return failed(`The writer failed: ${err.message}`);
    throw err;
  }
}
const writerFailed = (message: string): StepOutcome => ({ failed: { error_kind: 'writer_failed', message } });
const isOutcome = (x: unknown): x is StepOutcome => typeof x === 'object' && x !== null && ('failed' in x || 'succeeded' in x);

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: ' ', '#39': "'" };

/** A live page's readable text, headings kept as Markdown headings, and its <title>. */
export function pageText(html: string): { text: string; title: string | null } {
  const title = /<title[^>]*>([\s\S]*?)<\/title>/i.exec(html)?.[1]?.replace(/\s+/g, ' ').trim() || null;
  const body = /<body[^>]*>([\s\S]*)<\/body>/i.exec(html)?.[1] ?? html;
  const text = body
    .replace(/<(script|style|noscript|svg|template|iframe|nav|footer|header)\b[\s\S]*?<\/\1>/gi, ' ')
    .replace(/<!--[\s\S]*?-->/g, ' ')
    .replace(/<h([1-6])[^>]*>/gi, (_m, n: string) => `\n\n${'#'.repeat(Number(n))} `)
    .replace(/<\/h[1-6]>/gi, '\n\n')
    .replace(/<li[^>]*>/gi, '\n- ')
    .replace(/<(br|\/p|\/div|\/section|\/article|\/ul|\/ol|\/tr|\/blockquote)[^>]*>/gi, '\n\n')
    .replace(/<[^>]+>/g, ' ')
    .replace(/&(#?\w+);/g, (m, e: string) => ENTITIES[e.toLowerCase()] ?? (e.startsWith('#') ? String.fromCodePoint(Number(e.slice(1)) || 32) : m))
    .replace(/[ \t\u00a0]+/g, ' ')
    .split('\n')
    .map((l) => l.trim())
    .join('\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
  return { text: cutText(text, MAX_PAGE_CHARS), title };
}

/**
 * The content job (stream `content-<id>`): generated, snipe and slice write a brief (stage generated_brief, waiting
 * for its approval unless auto_approve_brief), then the article (generated); optimize fetches the live page through
 * the safe fetcher and reviews it (stage pending, the pipeline running, then succeeded). Each paid step charges its
 * credits beside its outcome; the worker's derived event ids make a step run twice record once. Each writing step
 * gives the writer the request's grounding facts still approved (queries/knowledge/grounding.ts); its version records their ids.
 */
export function contentJob(o: ContentJobOptions): JobSpec<ContentPipeline> {
  const fetch = o.fetch ?? createSafeFetcher();
  const day = () => (o.now?.() ?? new Date()).toISOString().slice(0, 10);
  const writer: Writer = createWriter(o.engines.engineFor(o.model), o.model, day);
  const charge = (s: ContentPipeline, step: keyof typeof GENERATION_CREDITS) =>
    creditsCharged({
      kind: 'content_generation',
      credits: GENERATION_CREDITS[step],
      website_id: s.request!.website_id,
      ref_id: s.content_id!,
      step,
      model: writer.model,
    });

  const briefStep: JobStep<ContentPipeline> = {
    name: 'brief',
    async run({ state: s, db }) {
      const g = await groundingFacts(db, s.request!.website_id, s.request!.fact_ids);
      const w = await writing(() => writer.write({ task: 'brief', ...subjectOf(s), facts: g.facts }), writerFailed);
      if (isOutcome(w)) return w;
      const content_id = s.content_id!;
      const version_number = s.version_number + 1;
      const events: StepEvent[] = [
        {
          type: 'ContentBriefGenerated',
          data: {
            content_id,
            brief: w.text,
            model: w.model,
            version_id: versionId(content_id, version_number),
            version_number,
            fact_ids: g.fact_ids,
          },
        },
        charge(s, 'brief'),
      ];
      if (s.request!.auto_approve_brief) events.push({ type: 'ContentBriefApproved', data: { content_id, auto: true } });
      return { events };
    },
  };

  /** A step writing the whole document (article, review) grounded in the request's facts: a new version, charged; the job succeeds. */
  const documentStep = (
    name: 'article' | 'review',
    type: 'ContentArticleGenerated' | 'ContentReviewed',
    task: (s: ContentPipeline, facts: WriterSubject['facts']) => WriterTask,
  ): JobStep<ContentPipeline> => ({
    name,
    async run({ state: s, db }) {
      const g = await groundingFacts(db, s.request!.website_id, s.request!.fact_ids);
      const w = await writing(() => writer.write(task(s, g.facts)), writerFailed);
      if (isOutcome(w)) return w;
      const content_id = s.content_id!;
      const version_number = s.version_number + 1;
      return {
        events: [
          {
            type,
            data: {
              content_id,
              body: w.text,
              meta_description: w.meta_description,
              model: w.model,
              version_id: versionId(content_id, version_number),
              version_number,
              fact_ids: g.fact_ids,
            },
          },
          charge(s, name),
        ],
        succeeded: true,
      };
    },
  });

  const articleStep = documentStep('article', 'ContentArticleGenerated', (s, facts) => ({
    task: 'article',
    ...subjectOf(s),
    facts,
    brief: s.brief ?? '',
  }));

  // by kind only: a fetcher's message names the URL or its host, which a delete of the item must erase (the reason is kept)
  const FETCH_FAILURES: Record<string, string> = {
    BAD_URL: 'not a valid public URL',
    BLOCKED_ADDRESS: 'its address is not public',
    DNS_FAILURE: 'its host did not resolve',
    TLS_ERROR: 'TLS failure',
    TOO_MANY_REDIRECTS: 'too many redirects',
    BODY_TOO_LARGE: 'the page is too large',
  };

  const fetchStep: JobStep<ContentPipeline> = {
    name: 'fetch',
    async run({ state: s }) {
      const url = s.request!.url!;
      const target = /^https?:\/\//i.test(url) ? url : `https://${url}`;
      let res: Awaited<ReturnType<SafeFetch>>;
      try {
        res = await fetch(target, { headers: { accept: 'text/html,application/xhtml+xml;q=0.9,*/*;q=0.5' } });
      } catch (err) {
        if (err instanceof SafeFetchError) {
          // a timeout or a dropped connection may pass: delivered again; an address refused or a bad URL will not
          if (err.code === 'TIMEOUT' || err.code === 'CONNECTION_ERROR') throw err;
          return { failed: { error_kind: 'fetch_failed', message: `The live page could not be fetched: ${FETCH_FAILURES[err.code] ?? err.code}` } };
        }
        throw err;
      }
      if (res.status >= 500) throw new Error(`the live page answered HTTP ${res.status}`);
      if (res.status >= 400) return { failed: { error_kind: 'fetch_failed', message: `The live page could not be fetched: HTTP ${res.status}` } };
      const { text } = pageText(res.body);
      if (!text) return { failed: { error_kind: 'fetch_failed', message: 'The live page has no readable text' } };
      const content_id = s.content_id!;
      const version_number = s.version_number + 1;
      return {
        events: [
          {
            type: 'ContentPageFetched',
            data: { content_id, url: target, http_status: res.status, body: text, version_id: versionId(content_id, version_number), version_number },
          },
        ],
      };
    },
  };

  const reviewStep = documentStep('review', 'ContentReviewed', (s, facts) => ({
    task: 'optimize',
    ...subjectOf(s),
    facts,
    url: s.request!.url!,
    page: s.body ?? '',
  }));

  const deletedStep: JobStep<ContentPipeline> = {
    name: 'deleted',
    run: async () => ({ failed: { error_kind: 'deleted', message: 'The content was deleted' } }),
  };

  return {
    kind: 'content',
    // no running caps: a generation waiting for its brief's approval would hold a slot for as long as it waits
    aggregate: pipelineAggregate,
    maxDeliver: 4,
    backoffMs: [2000, 10_000, 30_000],
    next(s) {
      const r = s.request;
      if (!r || s.pipeline_status !== 'running') return null;
      if (s.deleted) return deletedStep;
      if (r.type === 'optimize') return s.page_fetched ? reviewStep : fetchStep;
      if (s.stage === 'pending_brief') return briefStep;
      if (s.stage === 'pending_article') return articleStep;
      // generated_brief: waits for the approval (ContentBriefApproved resumes it)
      return null;
    },
  };
}
