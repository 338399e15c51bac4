import { z } from 'zod';
import { DISCOVERY_SOURCES } from '../../src/analysis/discovery';
import { decideCreatePrompt } from '../catalog/create-prompt';
import { handleCatalog } from '../catalog/catalog';
import { type DomainError, isDomainError } from '../../src/domain/errors';
import type { DomainEvent } from '../../src/domain/events';
import { deterministicId, newId } from '../../src/domain/ids';
import { jobStream } from '../../src/domain/jobs';
import { label, text, Uuid } from '../../src/domain/schemas';
import { type CommandContext, newEventsFor } from '../handle';

export const BRAND_GUIDELINES_NEED_INSTRUCTIONS = 'custom_instructions: must not be empty when sources include brand_guidelines';

export const StartPromptDiscovery = z
  .strictObject({
    website_id: Uuid.describe('The website (brand) id'),
    name: label(200).describe('A name for the run'),
    sources: z
      .array(z.enum(DISCOVERY_SOURCES, { error: `must be one of ${DISCOVERY_SOURCES.join(', ')}` }), { error: 'must be an array of sources' })
      .min(1, 'must name at least one source')
      .max(DISCOVERY_SOURCES.length, `must have at most ${DISCOVERY_SOURCES.length} items`)
      .refine((s) => new Set(s).size === s.length, 'must not repeat a source')
      .describe('Where suggestions come from: website_analysis, social, search_console, keyword_gaps, brand_guidelines (at least one)'),
    custom_instructions: text()
      .max(10_000, 'must be at most 10000 characters')
      .optional()
      .describe('Brand guidelines: required, non-empty, with brand_guidelines'),
    locale: text()
      .regex(/^[a-z]{2,3}(-[A-Z]{2})?$/, 'must be a locale such as en-US')
      .default('en-US')
      .describe('Locale of the prompts (default en-US)'),
    country: label(100).default('United States').describe('Country the prompts are asked from (default United States)'),
    prompt_count_min: z
      .number({ error: 'must be an integer' })
      .int('must be an integer')
      .min(1, 'must be between 1 and 100')
      .max(100, 'must be between 1 and 100')
      .default(25)
      .describe('Fewest prompts wanted (default 25)'),
    prompt_count_max: z
      .number({ error: 'must be an integer' })
      .int('must be an integer')
      .min(1, 'must be between 1 and 100')
      .max(100, 'must be between 1 and 100')
      .default(50)
      .describe('Most prompts suggested (default 50)'),
  })
  .refine((i) => i.prompt_count_min <= i.prompt_count_max, { message: 'must be at least prompt_count_min', path: ['prompt_count_max'] })
  .refine((i) => !i.sources.includes('brand_guidelines') || (i.custom_instructions ?? '').trim() !== '', {
    message: 'must not be empty when sources include brand_guidelines',
    path: ['custom_instructions'],
  });
export type StartPromptDiscovery = z.output<typeof StartPromptDiscovery>;

/** Opens a run's stream (discovery-<run_id>) with its request: the job workers take it from there. */
export async function startPromptDiscovery(ctx: CommandContext, input: StartPromptDiscovery) {
  const run_id = newId();
  const events: (DomainEvent & { id: string })[] = [
    {
      id: deterministicId('discovery-requested', run_id),
      type: 'PromptDiscoveryRequested',
      data: {
        run_id,
        website_id: input.website_id,
        name: input.name,
        sources: input.sources,
        custom_instructions: input.custom_instructions?.trim() || null,
        locale: input.locale,
        country: input.country,
        prompt_count_min: input.prompt_count_min,
        prompt_count_max: input.prompt_count_max,
      },
    },
  ];
  const r = await ctx.store.append(jobStream('discovery', run_id), newEventsFor({ ...ctx, websiteId: input.website_id }, events), 'no_stream');
  return { result: { run_id }, position: r.position, events };
}

export interface Suggestion {
  index: number;
  text: string;
  topic: string | null;
}

export interface AcceptedPrompt {
  index: number;
  prompt_id: string;
  text: string;
  topic_id: string | null;
}

/** The prompt an accepted suggestion makes: its id derives from the run and the index, so accepting twice makes it once. */
export const acceptedPromptId = (runId: string, index: number) => deterministicId('discovery-prompt', runId, String(index));

/**
 * Accepts suggestions of a run: each makes a prompt through the catalogue's create-prompt decision, all in one append
 * on the website's catalogue (filed under the live topic of the suggestion's topic name, if any), then the run
 * records which indices were accepted. A suggestion accepted before answers the prompt it made.
 */
export async function acceptDiscoveredPrompts(
  ctx: CommandContext,
  run: { run_id: string; website_id: string },
  suggestions: readonly Suggestion[],
): Promise<{ result: AcceptedPrompt[]; position: import('../../src/eventstore/port').Position | null } | DomainError> {
  const made = await handleCatalog(ctx, run.website_id, (s) => {
    const events: (DomainEvent & { id?: string })[] = [];
    const result: AcceptedPrompt[] = [];
    for (const sug of suggestions) {
      const prompt_id = acceptedPromptId(run.run_id, sug.index);
      const had = s.prompts.get(prompt_id);
      if (had) {
        result.push({ index: sug.index, prompt_id, text: had.text, topic_id: had.topic_id });
        continue;
      }
      const topic = sug.topic ? [...s.topics.values()].find((t) => !t.deleted && t.name.toLowerCase() === sug.topic!.toLowerCase()) : undefined;
      const d = decideCreatePrompt(s, { website_id: run.website_id, text: sug.text, topic_id: topic?.id ?? null, prompt_id, tags: ['discovery'] });
      if (isDomainError(d)) return d;
      events.push(...d.events.map((e) => ({ ...e, id: deterministicId('discovery-prompt-created', prompt_id) })));
      result.push({ index: sug.index, prompt_id, text: sug.text, topic_id: topic?.id ?? null });
    }
    return { events, result };
  });
  if (isDomainError(made)) return made;
  const indices = suggestions.map((x) => x.index);
  const accepted = await ctx.store.append(
    jobStream('discovery', run.run_id),
    newEventsFor({ ...ctx, websiteId: run.website_id }, [
      {
        id: deterministicId('discovery-accepted', run.run_id, indices.join(',')),
        type: 'PromptDiscoveryAccepted',
        data: { run_id: run.run_id, indices, prompt_ids: made.result.map((p) => p.prompt_id) },
      },
    ]),
    'any',
  );
  return { result: made.result, position: accepted.position };
}
