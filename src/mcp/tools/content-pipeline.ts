import { z } from 'zod';
import { EditContent } from '../../../commands/content/edit-content';
import { GenerateContent } from '../../../commands/content/generate-content';
import { PublishContent } from '../../../commands/content/publish-content';
import { ReviseContent } from '../../../commands/content/revise-content';
import { PipelineAnswers } from '../../../queries/content/versions';
import * as pipeline from '../../app/content-pipeline';
import { Uuid } from '../../domain/schemas';
import type { Caller } from '../../app/context';
import { READS, type ToolHints, tool } from '../tool';

const item = {
  content_id: Uuid.describe('The content item id'),
  website_id: Uuid.optional().describe('The website the item belongs to (optional: the content id decides; another one answers 404)'),
};

/** A tool changing one item: its input is the change and the item's ids; the operation gets the change apart from them. */
function itemChange<B extends z.ZodObject>(def: {
  name: string;
  title: string;
  description: string;
  body: B;
  output: z.ZodType<object>;
  annotations: ToolHints;
  change(caller: Caller, contentId: string, input: z.output<B>, websiteId?: string): Promise<object>;
}) {
  const { body, change, ...rest } = def;
  return tool({
    ...rest,
    input: body.extend(item),
    handler: (ctx, input) => {
      const { content_id, website_id, ...changes } = input as { content_id: string; website_id?: string };
      return change(ctx, content_id, changes as z.output<B>, website_id);
    },
  });
}

/** The content pipeline for assistants, with REST's rules and messages (src/app/content-pipeline.ts). */
export const contentPipelineTools = [
  tool({
    name: 'get_content_status',
    title: 'Get content status',
    description:
      "A content item's generation status (null for tracked pages), stage (generated_brief: the brief awaits approval) and failure reason. Poll it after generate_content.",
    input: z.strictObject(item),
    output: PipelineAnswers.status,
    annotations: READS,
    handler: (ctx, input) => pipeline.contentStatus(ctx, input.content_id, input.website_id),
  }),
  tool({
    name: 'get_content_version',
    title: 'Get a content version',
    description:
      'One version of a content item: its body, brief and meta description as they were, its label and change type. Without version_id: the latest version.',
    input: z.strictObject({ ...item, version_id: Uuid.optional().describe('The version id (default: the latest)') }),
    output: PipelineAnswers.version,
    annotations: READS,
    handler: (ctx, input) => pipeline.version(ctx, input.content_id, input.version_id ?? null, input.website_id),
  }),
  tool({
    name: 'generate_content',
    title: 'Generate content',
    description:
      'Start writing content as a job (costs credits); poll get_content_status. generated, snipe and slice write a brief first that awaits approval unless auto_approve_brief; optimize reviews a live url.',
    input: GenerateContent,
    output: PipelineAnswers.generated,
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
    handler: (ctx, input) => pipeline.generateContent(ctx, input),
  }),
  itemChange({
    name: 'publish_content',
    title: 'Publish content',
    description:
      'Mark finished content published at its live URL, which becomes the key citations are matched by. Sent again with another URL, only the URL changes.',
    body: PublishContent,
    output: PipelineAnswers.published,
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    change: pipeline.publish,
  }),
  itemChange({
    name: 'edit_content',
    title: 'Edit content',
    description:
      'Exact find-and-replace edits of the current draft (1 to 20, in order, each find matching once; all or nothing), saved as one new version. No credits; to reword, use revise_content.',
    body: EditContent,
    output: PipelineAnswers.edited,
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
    change: pipeline.edit,
  }),
  itemChange({
    name: 'revise_content',
    title: 'Revise content',
    description:
      'Rewrite the draft by an instruction through the writer (costs credits); answers the new body and word counts. A result far shorter than the draft fails, leaving the draft unchanged.',
    body: ReviseContent,
    output: PipelineAnswers.revised,
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
    change: pipeline.revise,
  }),
];
