import { z } from 'zod';
import type { EventData } from '../../src/domain/events';
import { deterministicId, newId } from '../../src/domain/ids';
import { label, Uuid, WebsiteId } from '../../src/domain/schemas';
import { WrongExpectedRevisionError, type Position } from '../../src/eventstore/port';
import { type CommandContext, newEventsFor } from '../handle';
import { contentStream, GENERATION_TYPES } from './pipeline';

/** Prompts a generation may target (the spec's 25 ids per row). */
export const MAX_GENERATION_PROMPTS = 25;

export const FactReview = z.strictObject({
  topic_ids: z
    .array(Uuid)
    .max(100, 'must have at most 100 ids')
    .default([])
    .describe('Knowledge-base pillars: their approved facts ground the draft'),
  kept_claim_ids: z.array(Uuid).max(100, 'must have at most 100 ids').default([]).describe('Approved facts of the website the writer is given'),
  excluded_claim_ids: z
    .array(Uuid)
    .max(100, 'must have at most 100 ids')
    .default([])
    .describe('Approved facts of the website the writer is never given (also not from the topics)'),
});

export const GenerateContent = z.strictObject({
  website_id: WebsiteId,
  type: z
    .enum(GENERATION_TYPES, { error: `must be one of ${GENERATION_TYPES.join(', ')}` })
    .default('generated')
    .describe(
      'generated (default: brief then article), optimize (review of a live page: url), snipe (win the citations competitors get), slice (a short focused page)',
    ),
  title: label(300).optional().describe("The draft's title (default: the topic's name, the first prompt, or the page)"),
  topic_id: Uuid.optional().describe('The topic the content is about'),
  prompt_ids: z
    .array(Uuid)
    .max(MAX_GENERATION_PROMPTS, `must have at most ${MAX_GENERATION_PROMPTS} ids`)
    .optional()
    .describe(`Prompts the content must answer (at most ${MAX_GENERATION_PROMPTS})`),
  url: label(2048).optional().describe('optimize only: the live page to review (fetched)'),
  sheet_id: Uuid.optional().describe('The tab the item goes to (a view tab resolves to the main pool)'),
  auto_approve_brief: z
    .boolean()
    .default(false)
    .describe(
      'Approve the brief at once and write the article without waiting (default false); otherwise the brief waits for POST /api/v1/content/{id}/brief/approve',
    ),
  mode: z.enum(['draft'], { error: 'must be draft (the only mode)' }).default('draft').describe('draft (the only mode)'),
  fact_review: FactReview.optional().describe(
    "Ground the draft on the knowledge base (needs the organization's knowledge base): the writer gets the kept facts and the topics' approved facts, never the excluded ones; ids that are not approved facts (topics: pillars) of the website are refused. Without it the writer gets no facts.",
  ),
});
export type GenerateContent = z.output<typeof GenerateContent>;

/** A generation as admitted: the input with what the writer is told resolved (texts of the topic and prompts, the brand). */
export type ContentGenerationRequest = Omit<EventData<'ContentGenerationRequested'>, 'content_id'>;

export interface GenerateContentResult {
  content_id: string;
  status: 'running';
  stage: 'pending_brief' | 'pending';
}

/**
 * Opens a new item's stream with the generation's request: the content job's request (JOB_KINDS.content), which the
 * content workers take up. The item is `pending_brief` (optimize: `pending`) and its pipeline `running` from here.
 */
export async function requestContentGeneration(
  ctx: CommandContext,
  request: ContentGenerationRequest,
): Promise<{ result: GenerateContentResult; position: Position }> {
  const content_id = newId();
  const events = newEventsFor(ctx, [
    { id: deterministicId('content-requested', content_id), type: 'ContentGenerationRequested', data: { content_id, ...request } },
  ]);
  try {
    const r = await ctx.store.append(contentStream(content_id), events, 'no_stream');
    return { result: { content_id, status: 'running', stage: request.type === 'optimize' ? 'pending' : 'pending_brief' }, position: r.position };
  } catch (err) {
    if (err instanceof WrongExpectedRevisionError) throw new Error(`content ${content_id} exists already`);
    throw err;
  }
}

/**
 * The demo website's generated draft (embedded first start): a brief approved at once and an article the content job
 * writes with the simulated writer, so the content hub shows one generated item beside the tracked pages.
 */
export function requestDemoDraft(
  ctx: CommandContext,
  demo: {
    website_id: string;
    brand: { name: string; domain: string };
    topic: { id: string; name: string } | null;
    prompts: { id: string; text: string }[];
  },
  model: string,
) {
  const prompts = demo.prompts.slice(0, 3);
  return requestContentGeneration(ctx, {
    website_id: demo.website_id,
    type: 'generated',
    title: `${demo.brand.name}: a buyer's guide${demo.topic ? ` to ${demo.topic.name.toLowerCase()}` : ''}`,
    url: null,
    normalized_url: null,
    topic_id: demo.topic?.id ?? null,
    topic_name: demo.topic?.name ?? null,
    prompt_ids: prompts.map((p) => p.id),
    prompts: prompts.map((p) => p.text),
    sheet_id: null,
    auto_approve_brief: true,
    mode: 'draft',
    model,
    brand: demo.brand,
    fact_review: null,
  });
}
