import type { Knex } from 'knex';
import { promptsCovered, recommend, type SeoContext } from '../analysis/seo';
import { approvedFactTexts } from '../../queries/knowledge/knowledge';
import { creditsCharged } from '../domain/credits';
import type { EventData } from '../domain/events';
import type { SlotPool } from '../limits/slots';
import { type JobSpec, type OneStepState, oneStepAggregate, perWebsite } from './jobs';
import { listPrompts } from '../../queries/catalog/prompts';
import { hasFeature } from '../../queries/organizations/organizations';
import { latestMatched, trackedEntities } from '../../queries/responses/list';
import { websiteById } from '../../queries/websites/websites';

/** The spec's caps: 4 SEO jobs running per website, 16 in all; beyond, a job waits queued. */
export const SEO_SLOTS: SlotPool = { name: 'seo', perScope: 4, overall: 16 };
/** Credits one SEO recommendations job costs. */
export const SEO_JOB_CREDITS = 1;
/** Answers read per prompt the page could answer, newest first: enough to say who the engines name. */
const ANSWERS_PER_PROMPT = 50;
/** Approved facts read per job, newest first. */
const FACTS_READ = 5000;

/** The request, and done once the recommendations are recorded (SeoRecommendationsProduced). */
export type SeoState = OneStepState<'SeoRecommendationsRequested'>;

/**
 * Per prompt: the competitors its latest answers (up to `perPrompt` each) name in answers that do not name the brand,
 * most named first. Prompts without such answers are absent.
 */
export async function competitorGapsOf(
  db: Knex,
  websiteId: string,
  promptIds: readonly string[],
  perPrompt: number,
): Promise<Map<string, { name: string; answers: number }[]>> {
  const gaps = new Map<string, { name: string; answers: number }[]>();
  if (!promptIds.length) return gaps;
  const entities = await trackedEntities(db, websiteId);
  // each answer's entity matches as the answers projection stored them (its one analysis, kept in line by re-derivation)
  const answers = await latestMatched(db, websiteId, promptIds, perPrompt);
  const byId = new Map(entities.map((e) => [e.id, e]));
  for (const a of answers) {
    const mentioned = a.matched.m.map(([id]) => byId.get(id));
    if (mentioned.some((e) => e?.is_self)) continue;
    const counts = gaps.get(a.prompt_id) ?? [];
    for (const e of mentioned) {
      if (!e) continue;
      const c = counts.find((x) => x.name === e.name);
      if (c) c.answers++;
      else counts.push({ name: e.name, answers: 1 });
    }
    if (counts.length) gaps.set(a.prompt_id, counts);
  }
  for (const list of gaps.values()) list.sort((x, y) => y.answers - x.answers || x.name.localeCompare(y.name));
  return gaps;
}

/** The website's data a page is weighed against: its brand, active prompts, who the answers name instead, approved facts. */
export async function seoContext(db: Knex, websiteId: string, page: EventData<'SeoRecommendationsRequested'>['page']): Promise<SeoContext> {
  const site = await websiteById(db, websiteId);
  const prompts = (await listPrompts(db, websiteId))
    .filter((p) => p.status === 'active')
    .slice(0, 2000)
    .map((p) => ({ id: p.id, text: p.text }));
  const covered = promptsCovered(page, prompts).slice(0, 10);
  const competitorGaps = await competitorGapsOf(
    db,
    websiteId,
    covered.map((p) => p.id),
    ANSWERS_PER_PROMPT,
  );
  // approved facts, when the organization has the knowledge base (checked as the job runs; off: no facts, no error)
  const knowledgeBase = site ? await hasFeature(db, site.organization_id, 'knowledge_base') : false;
  const facts = knowledgeBase ? await approvedFactTexts(db, websiteId, FACTS_READ) : [];
  return { brand: site?.name ?? 'the brand', prompts, competitorGaps, facts };
}

/**
 * SEO recommendations as a job: one step weighs the page (fetched at submission, or the draft) against the website's
 * prompts and answers, records the recommendations and the job's credits, and ends the job.
 */
export function seoJob(
  deps: { db: Knex },
  options: { slots?: SlotPool /** tests hold a step here */; beforeStep?: () => Promise<void> } = {},
): JobSpec<SeoState> {
  return {
    kind: 'seo',
    aggregate: oneStepAggregate('SeoRecommendationsRequested', 'SeoRecommendationsProduced'),
    slots: perWebsite(options.slots ?? SEO_SLOTS),
    // above the overall cap: a second message for a running job (a wake) waits behind it holding a place
    concurrency: 64,
    next(s) {
      const r = s.requested;
      if (!r || s.done) return null;
      return {
        name: 'recommend',
        async run({ jobId }) {
          await options.beforeStep?.();
          const ctx = await seoContext(deps.db, r.website_id, r.page);
          const recommendations = recommend(jobId, r.page, ctx, r.source);
          return {
            events: [
              { type: 'SeoRecommendationsProduced', data: { job_id: jobId, recommendations } },
              creditsCharged({ kind: 'seo_recommendation', credits: SEO_JOB_CREDITS, website_id: r.website_id, ref_id: jobId, step: 'recommend' }),
            ],
            succeeded: true,
          };
        },
      };
    },
  };
}
