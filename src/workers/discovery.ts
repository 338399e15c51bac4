import type { Knex } from 'knex';
import { type DiscoveryData, type DiscoverySource, discoverPrompts, UNAVAILABLE_REASONS } from '../analysis/discovery';
import { creditsCharged } from '../domain/credits';
import type { EventData } from '../domain/events';
import { isHostWithinDomain } from '../domain/urls';
import { hostOf, domainOf } from '../domain/urls';
import { type JobSpec, type OneStepState, oneStepAggregate } from './jobs';
import { competitorGapsOf } from './seo';

/** Credits one prompt discovery run costs. */
export const DISCOVERY_RUN_CREDITS = 2;

/** The request, and done once the run is recorded (PromptDiscoveryCompleted). */
export type DiscoveryState = OneStepState<'PromptDiscoveryRequested'>;

/** The website's own data the served sources read. */
export async function discoveryData(db: Knex, r: EventData<'PromptDiscoveryRequested'>): Promise<DiscoveryData> {
  const site = await db('rm_websites').where('id', r.website_id).first('name', 'url');
  const topics = (await db('rm_topics').where('website_id', r.website_id).whereNull('deleted_at').orderBy('seq').pluck('name')) as string[];
  const prompts = (await db('rm_prompts')
    .where('website_id', r.website_id)
    .whereNull('soft_deleted_at')
    .orderBy('seq')
    .limit(5000)
    .select('id', 'text', 'topic_id', 'status')) as { id: string; text: string; topic_id: string | null; status: string }[];
  const domain = site ? domainOf(site.url) : null;
  let pages: string[] = [];
  if (r.sources.includes('website_analysis') && domain) {
    const cited = await db.raw(
      `select distinct c as url from (select citations from rm_responses where website_id = ? order by run_at desc limit 20000) r, jsonb_array_elements_text(r.citations) c limit 5000`,
      [r.website_id],
    );
    pages = (cited.rows as { url: string }[]).map((x) => x.url).filter((u) => isHostWithinDomain(hostOf(u), domain));
  }
  const topicName = new Map(
    (await db('rm_topics').where('website_id', r.website_id).select('id', 'name')).map((t: { id: string; name: string }) => [t.id, t.name]),
  );
  let gaps: DiscoveryData['gaps'] = [];
  if (r.sources.includes('keyword_gaps')) {
    const active = prompts.filter((p) => p.status === 'active').slice(0, 500);
    const found = await competitorGapsOf(
      db,
      r.website_id,
      active.map((p) => p.id),
      20,
    );
    gaps = active
      .filter((p) => found.has(p.id))
      .map((p) => ({
        prompt: p.text,
        topic: p.topic_id ? (topicName.get(p.topic_id) ?? null) : null,
        competitors: found.get(p.id)!.map((c) => c.name),
      }));
  }
  return {
    brand: site?.name ?? 'the brand',
    country: r.country,
    topics,
    pages,
    gaps,
    custom_instructions: r.custom_instructions,
    existing: prompts.map((p) => p.text),
  };
}

/** Why a served source gave nothing: its data is not there yet (listed, never papered over). */
function emptyReason(source: DiscoverySource, data: DiscoveryData): string | null {
  if (source === 'website_analysis' && !data.pages.length && !data.topics.length)
    return 'no pages of the website are known yet (none is cited in its answers) and it has no topics';
  if (source === 'keyword_gaps' && !data.gaps.length) return 'no prompt has answers that name a competitor without the brand yet';
  return null;
}

/** A prompt discovery run as a job: one step reads the website's data, suggests prompts, records them and the credits. */
export function discoveryJob(deps: { db: Knex }): JobSpec<DiscoveryState> {
  return {
    kind: 'discovery',
    aggregate: oneStepAggregate('PromptDiscoveryRequested', 'PromptDiscoveryCompleted'),
    next(s) {
      const r = s.requested;
      if (!r || s.done) return null;
      return {
        name: 'discover',
        async run() {
          const sources = r.sources as DiscoverySource[];
          const data = await discoveryData(deps.db, r);
          const unavailable_sources: { source: string; reason: string }[] = [];
          for (const source of sources) {
            const reason = UNAVAILABLE_REASONS[source] ?? emptyReason(source, data);
            if (reason) unavailable_sources.push({ source, reason });
          }
          const prompts = discoverPrompts(sources, data, r.prompt_count_max);
          return {
            events: [
              { type: 'PromptDiscoveryCompleted', data: { run_id: r.run_id, prompts, unavailable_sources } },
              creditsCharged({
                kind: 'prompt_discovery',
                credits: DISCOVERY_RUN_CREDITS,
                website_id: r.website_id,
                ref_id: r.run_id,
                step: 'discover',
              }),
            ],
            succeeded: true,
          };
        },
      };
    },
  };
}
