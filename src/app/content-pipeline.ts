import { approveBrief } from '../../commands/content/approve-brief';
import { type EditContent, editContent } from '../../commands/content/edit-content';
import { type GenerateContent, requestContentGeneration } from '../../commands/content/generate-content';
import { publishContent, type PublishContent } from '../../commands/content/publish-content';
import { FRAGMENT, REVISION_FRAGMENT, type ReviseContent, reviseContent } from '../../commands/content/revise-content';
import { getVersion, listVersions } from '../../queries/content/versions';
import { getTopic } from '../../queries/catalog/topics';
import { livePromptTexts } from '../../queries/catalog/prompts';
import { sheetType } from '../../queries/content/items';
import { SHEET_NOT_FOUND } from '../domain/content';
import { DomainErrorException, forbidden, invalid, notFound } from '../domain/errors';
import { tryNormalizeUrl } from '../domain/urls';
import { isEngineError } from '../engines/port';
import { createWriter } from '../engines/writer';
import { CONTENT_EDIT, CONTENT_READS, CONTENT_VIEW, contentFor } from './content';
import { groundingFactIds } from './content-grounding';
import { type Caller, commandContextOf, dbOf, settled, websiteFor } from './context';
import { ProblemError } from './problem';
import type { z } from 'zod';
import { cutText } from '../domain/text';

/**
 * The content pipeline's operations (CONTRACT.md, Content hub: generate, brief approval, status, publish, edit,
 * revise, versions): access through contentFor, the command, read-your-writes, the answer. REST and MCP call these.
 */

export const KNOWLEDGE_BASE_NOT_ENABLED = 'Knowledge base is not enabled for this organization';
export const VERSION_NOT_FOUND = 'Version not found';
export const WRITER_UNAVAILABLE = 'The writer is unavailable; the draft is unchanged: try again shortly';
const MAX_TITLE = 300;

/** POST /api/v1/content/generate: a new item whose generation runs as a job; 202 with its id, `running`, its first stage. */
export async function generateContent(c: Caller, input: GenerateContent) {
  const website = await websiteFor(c, input.website_id, CONTENT_EDIT);
  const db = dbOf(c);
  if (input.fact_review && !c.principal.features.includes('knowledge_base')) throw new DomainErrorException(forbidden(KNOWLEDGE_BASE_NOT_ENABLED));
  let url: string | null = null;
  let normalized: string | null = null;
  if (input.type === 'optimize') {
    if (!input.url) throw new DomainErrorException(invalid('url is required for type optimize (the live page)'));
    normalized = tryNormalizeUrl(input.url);
    if (!normalized) throw new DomainErrorException(invalid('url must be a URL (the live page)'));
    url = /^https?:\/\//i.test(input.url) ? input.url : `https://${input.url}`;
  } else if (input.url !== undefined) {
    throw new DomainErrorException(invalid('url is only taken with type optimize (a draft gets its URL when it is published)'));
  }
  const topic = input.topic_id ? await getTopic(db, website.id, input.topic_id) : undefined;
  if (input.topic_id && !topic) throw new DomainErrorException(notFound('Topic not found'));
  const promptIds = [...new Set(input.prompt_ids ?? [])];
  const promptText = await livePromptTexts(db, website.id, promptIds);
  if (promptText.size !== promptIds.length) throw new DomainErrorException(notFound('Prompt not found'));
  let sheetId: string | null = null;
  if (input.sheet_id) {
    const type = await sheetType(db, website.id, input.sheet_id);
    if (!type) throw new DomainErrorException(notFound(SHEET_NOT_FOUND));
    // a view-type tab resolves to the main pool, as tracking does
    sheetId = type === 'view' ? null : input.sheet_id;
  }
  const texts = promptIds.map((id) => promptText.get(id)!);
  const factIds = input.fact_review ? await groundingFactIds(c, website.id, input.fact_review) : [];
  const title = cutText(input.title ?? topic?.name ?? texts[0] ?? (normalized ? `Optimize ${normalized}` : 'Untitled draft'), MAX_TITLE);
  const ctx = commandContextOf(c, website.id);
  return settled(
    c.deps,
    requestContentGeneration(ctx, {
      website_id: website.id,
      type: input.type,
      title,
      url,
      normalized_url: normalized,
      topic_id: topic?.id ?? null,
      topic_name: topic?.name ?? null,
      prompt_ids: promptIds,
      prompts: texts,
      sheet_id: sheetId,
      auto_approve_brief: input.auto_approve_brief,
      mode: input.mode,
      model: c.deps.rt.config.contentModel,
      brand: { name: website.name, domain: website.normalized_url.split('/')[0] },
      fact_review: input.fact_review ?? null,
      fact_ids: factIds,
    }),
    CONTENT_READS,
  );
}

/** POST /api/v1/content/{id}/brief/approve */
export async function approveContentBrief(c: Caller, contentId: string, websiteId?: string) {
  const { row } = await contentFor(c, contentId, websiteId, CONTENT_EDIT);
  return settled(c.deps, approveBrief(commandContextOf(c, row.website_id), contentId), CONTENT_READS);
}

/** GET /api/v1/content/{id}/status: `{status: <pipeline status>, stage}` (and why a failed generation failed). */
export async function contentStatus(c: Caller, contentId: string, websiteId?: string) {
  const { row } = await contentFor(c, contentId, websiteId, CONTENT_VIEW);
  // the reason is in the item's own row, written with the failed status: never a failed status without its reason
  return { status: row.pipeline_status, stage: row.stage, error: row.pipeline_status === 'failed' ? row.pipeline_error : null };
}

/** POST /api/v1/content/{id}/publish */
export async function publish(c: Caller, contentId: string, input: z.output<typeof PublishContent>, websiteId?: string) {
  const { row } = await contentFor(c, contentId, websiteId, CONTENT_EDIT);
  const r = await settled(c.deps, publishContent(commandContextOf(c, row.website_id), contentId, input), CONTENT_READS);
  return { success: true as const, ...r };
}

/** POST /api/v1/content/{id}/edit */
export async function edit(c: Caller, contentId: string, input: EditContent, websiteId?: string) {
  const { row } = await contentFor(c, contentId, websiteId, CONTENT_EDIT);
  const r = await settled(c.deps, editContent(commandContextOf(c, row.website_id), contentId, input), CONTENT_READS);
  return { success: true as const, version_id: r.version_id, version_number: r.version_number, body_word_count: r.body_word_count };
}

/** POST /api/v1/content/{id}/revise: the writer rewrites the draft (the fragment rule: 500 and the draft unchanged). */
export async function revise(c: Caller, contentId: string, input: ReviseContent, websiteId?: string) {
  const { row } = await contentFor(c, contentId, websiteId, CONTENT_EDIT);
  const model = c.deps.rt.config.contentModel;
  const writer = createWriter(c.deps.rt.engines.engineFor(model), model);
  let r: Awaited<ReturnType<typeof reviseContent>>;
  try {
    r = await reviseContent(commandContextOf(c, row.website_id), contentId, input, writer);
  } catch (err) {
    // the writer's engine down or refusing: nothing saved, the caller may try again
    if (isEngineError(err)) throw new ProblemError(503, WRITER_UNAVAILABLE, undefined, { 'retry-after': '30' });
    throw err;
  }
  if (r === FRAGMENT) throw new ProblemError(500, REVISION_FRAGMENT);
  const { content_id: _, ...answer } = await settled(c.deps, Promise.resolve(r), CONTENT_READS);
  return answer;
}

/** GET /api/v1/content/{id}/versions: newest first (extension). */
export async function versions(c: Caller, contentId: string, websiteId?: string) {
  await contentFor(c, contentId, websiteId, CONTENT_VIEW);
  return listVersions(dbOf(c), contentId);
}

/** GET /api/v1/content/{id}/versions/{version_id}: the version object (null id: the latest, for the MCP tool). */
export async function version(c: Caller, contentId: string, versionId: string | null, websiteId?: string) {
  await contentFor(c, contentId, websiteId, CONTENT_VIEW);
  const v = await getVersion(dbOf(c), contentId, versionId);
  if (!v) throw new DomainErrorException(notFound(VERSION_NOT_FOUND));
  return v;
}
