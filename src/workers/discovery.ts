import type { Knex } from 'knex';
import { type DiscoveryData, type DiscoverySource, discoveryMaterial, proposePrompts, UNAVAILABLE_REASONS } from '../analysis/discovery';
import { creditsCharged } from '../domain/credits';
import type { EventData } from '../domain/events';
import type { ModelId } from '../domain/models';
import type { Engines } from '../engines/registry';
import { createWriter } from '../engines/writer';
import { isHostWithinDomain } from '../domain/urls';
import { hostOf, domainOf } from '../domain/urls';
import { type JobSpec, type OneStepState, oneStepAggregate } from './jobs';
import { competitorGapsOf } from './seo';
import { listPrompts } from '../../queries/catalog/prompts';
import { listTopics, topicNamesById } from '../../queries/catalog/topics';
import { recentCitedUrls } from '../../queries/responses/list';
import { websiteById } from '../../queries/websites/websites';

/** Credits one prompt discovery run costs. */
export const DISCOVERY_RUN_CREDITS = 2;

/** The request, and done once the run is recorded (PromptDiscoveryCompleted). */
export type DiscoveryState = OneStepState<'PromptDiscoveryRequested'>;

/** The website's own data the served sources read. */
export async function discoveryData(db: Knex, r: EventData<'PromptDiscoveryRequested'>): Promise<DiscoveryData> {
  const site = await websiteById(db, r.website_id);
  const topics = (await listTopics(db, r.website_id)).map((t) => t.name);
  const prompts = (await listPrompts(db, r.website_id)).slice(0, 5000);
  const domain = site ? domainOf(site.url) : null;
  let pages: string[] = [];
  if (r.sources.includes('website_analysis') && domain) {
    pages = (await recentCitedUrls(db, r.website_id)).filter((u) => isHostWithinDomain(hostOf(u), domain));
  }
  const topicName = await topicNamesById(db, r.website_id);
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

export interface DiscoveryJobDeps {
  db: Knex;
  engines: Engines;
  /** CONTENT_MODEL: the catalogue model that writes the proposals */
  contentModel: ModelId;
  now?: () => Date;
}

/**
 * A prompt discovery run as a job: one step reads the website's data, has the writer propose prompts from the served
 * sources' material until the band's minimum is reached (bounded), and records them with the run's and the writer
 * calls' credits. A run the writer cannot bring to prompt_count_min fails saying how many it found and why.
 */
export function discoveryJob(deps: DiscoveryJobDeps): JobSpec<DiscoveryState> {
  const day = () => (deps.now?.() ?? new Date()).toISOString().slice(0, 10);
  const writer = createWriter(deps.engines.engineFor(deps.contentModel), deps.contentModel, day);
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
          // a failure a retry may cure throws (delivered again); a refusal fails the run with the calls made before it
          const proposed = await proposePrompts(writer, discoveryMaterial(sources, data), data, {
            min: r.prompt_count_min,
            max: r.prompt_count_max,
            locale: r.locale,
          });
          const charge = (step: string, credits: number, model?: string) =>
            creditsCharged({ kind: 'prompt_discovery', credits, website_id: r.website_id, ref_id: r.run_id, step, model });
          const calls = proposed.calls.map((credits, i) => charge(`propose-${i + 1}`, credits, writer.model));
          if (proposed.refused)
            return { events: calls, failed: { error_kind: 'writer_failed', message: `The writer failed: ${proposed.refused.message}` } };
          const { prompts } = proposed;
          if (prompts.length < r.prompt_count_min) {
            const why = unavailable_sources.map((u) => `${u.source}: ${u.reason}`).join('; ');
            const message = calls.length
              ? `The writer proposed ${prompts.length} new distinct prompts in ${calls.length} requests, fewer than prompt_count_min (${r.prompt_count_min})${why ? `. ${why}` : ''}`
              : `No source has material to propose prompts from: ${why}`;
            return { events: calls, failed: { error_kind: 'too_few_prompts', message } };
          }
          return {
            events: [
              { type: 'PromptDiscoveryCompleted', data: { run_id: r.run_id, prompts, unavailable_sources } },
              charge('discover', DISCOVERY_RUN_CREDITS),
              ...calls,
            ],
            succeeded: true,
          };
        },
      };
    },
  };
}
