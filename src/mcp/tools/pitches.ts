import { z } from 'zod';
import { CreatePitch, IdempotencyKey } from '../../../commands/pitches/request-pitch';
import { PitchAdmittedView, PitchListView, PitchReportView } from '../../../queries/pitches/views';
import { createPitch, getPitch, listPitches } from '../../app/pitches';
import { PageNum, PageSize, text } from '../../domain/schemas';
import { tool, READS } from '../tool';

/** Pitch reports for assistants, with REST's rules (src/app/pitches.ts); no website_id: a report is the organization's. */
export const pitchesTools = [
  tool({
    name: 'create_pitch',
    title: 'Create a pitch report',
    description:
      "Start a pitch report on a prospect's website (global key): what four answer engines say of it. Retrying with the same idempotency_key returns the same report. Poll get_pitch until completed or failed.",
    input: CreatePitch.extend({
      idempotency_key: IdempotencyKey.describe('One key per report (as the Idempotency-Key header): retry with the same key after an error'),
    }),
    output: PitchAdmittedView,
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: true },
    async handler(ctx, input) {
      const { idempotency_key, ...body } = input;
      return (await createPitch(ctx, body, idempotency_key)).body;
    },
  }),
  tool({
    name: 'get_pitch',
    title: 'Get a pitch report',
    description:
      'A pitch report (global key): pitch (status processing, completed or failed), competitors with mentions and sentiment, prompts, attributes, the top 10 citing domains and the metrics.',
    input: z.strictObject({ pitch_id: text().describe('The pitch report id (pitch_id from create_pitch)') }),
    output: PitchReportView,
    annotations: READS,
    handler: (ctx, input) => getPitch(ctx, input.pitch_id),
  }),
  tool({
    name: 'list_pitches',
    title: 'List pitch reports',
    description: "The organization's pitch reports, newest first, with their status and report_url (global key).",
    input: z.strictObject({ page_num: PageNum(), page_size: PageSize() }),
    output: PitchListView,
    annotations: READS,
    handler: (ctx, input) => listPitches(ctx, input),
  }),
];
