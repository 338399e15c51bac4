import type { Knex } from 'knex';
import type { StoredMatched } from '../../projections/answers/schema';
import { promptsCovered, recommend, type SeoContext } from '../analysis/seo';
import { approvedFactTexts } from '../../queries/knowledge/knowledge';
import { creditsCharged } from '../domain/credits';
import type { EventData } from '../domain/events';
import type { SlotPool } from '../limits/slots';
import { type JobSpec, type OneStepState, oneStepAggregate, perWebsite } from './jobs';

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
  const entities = (await db('rm_analysis_entities')
    .where({ website_id: websiteId, removed: false })
    .orderBy('slot')
    .select('entity_id as id', 'name', 'is_self')) as { id: string; name: string; is_self: boolean }[];
  // each answer's entity matches as the answers projection stored them (its one analysis, kept in line by re-derivation)
  const answers = await db.raw(
    `select prompt_id, matched from (
       select prompt_id, matched, row_number() over (partition by prompt_id order by run_at desc) as n
         from rm_responses where website_id = ? and prompt_id = any(?::uuid[])
     ) r where n <= ?`,
    [websiteId, [...promptIds], perPrompt],
  );
  const byId = new Map(entities.map((e) => [e.id, e]));
  for (const a of answers.rows as { prompt_id: string; matched: StoredMatched }[]) {
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
  const site = await db('rm_websites').where('id', websiteId).first('name', 'organization_id');
  const prompts = (await db('rm_prompts')
    .where({ website_id: websiteId, status: 'active' })
    .whereNull('soft_deleted_at')
    .orderBy('seq')
    .limit(2000)
    .select('id', 'text')) as { id: string; text: string }[];
  const covered = promptsCovered(page, prompts).slice(0, 10);
  const competitorGaps = await competitorGapsOf(
    db,
    websiteId,
    covered.map((p) => p.id),
    ANSWERS_PER_PROMPT,
  );
  // approved facts, when the organization has the knowledge base (checked as the job runs; off: no facts, no error)
  const org = site ? await db('rm_organizations').where('id', site.organization_id).first('features') : null;
  const facts = Array.isArray(org?.features) && org.features.includes('knowledge_base') ? await approvedFactTexts(db, websiteId, FACTS_READ) : [];
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
