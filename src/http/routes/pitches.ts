import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { CreatePitch, IdempotencyKey } from '../../../commands/pitches/request-pitch';
import { PitchAdmittedView, PitchListView, PitchReportView, PitchUsageView } from '../../../queries/pitches/views';
import { createPitch, getPitch, listPitches, pitchUsage, reportPageData } from '../../app/pitches';
import { PageNum, PageSize, Text } from '../../domain/schemas';
import { sendPage } from '../../pages/layout';
import { pitchReportPage, reportNotFoundPage } from '../../pages/pitch-report';
import { type HttpDeps, headerInput, routeGroup } from '../route';

const api = routeGroup({ tag: 'pitch reports' });

/** Pitch reports: thin adapters over src/app/pitches.ts. */
export const pitchRoutes = [
  api.post('/api/v1/pitches', {
    summary:
      'Create a pitch report from a website URL (global key; header Idempotency-Key, one per report): 202 while it is processing; the same key and input answer the same report (200 once it has ended), other input 409',
    body: CreatePitch,
    status: 202,
    responses: { 202: PitchAdmittedView, 200: PitchAdmittedView },
    async handler(ctx) {
      const key = headerInput(ctx.req.headers, 'Idempotency-Key', IdempotencyKey.optional());
      const r = await createPitch(ctx, ctx.body, key);
      if (r.status === 200) return ctx.reply.code(200).send(r.body);
      return r.body;
    },
  }),
  api.get('/api/v1/pitches', {
    summary: "The organization's pitch reports, newest first (global key)",
    extension: true,
    query: z.strictObject({ page_num: PageNum(true), page_size: PageSize(true) }),
    answer: PitchListView,
    handler: (ctx) => listPitches(ctx, ctx.query),
  }),
  api.get('/api/v1/pitches/usage', {
    summary: "The organization's pitch allowance this UTC month: used (reserved and consumed) and the limit (global key)",
    extension: true,
    query: z.strictObject({}),
    answer: PitchUsageView,
    handler: (ctx) => pitchUsage(ctx),
  }),
  api.get('/api/v1/pitches/:pitch_id', {
    summary:
      'A pitch report: pitch, competitors, prompts, attributes, sources, metrics (global key); poll every 10 seconds until completed or failed',
    params: z.object({ pitch_id: Text.describe('The pitch report id (a UUID)') }),
    query: z.strictObject({}),
    answer: PitchReportView,
    handler: (ctx) => getPitch(ctx, ctx.params.pitch_id),
  }),
];

/** The public report page at report_url: anyone with the link, no key; HTML, not part of the API document. */
export function registerPitchPages(app: FastifyInstance, deps: HttpDeps): void {
  app.get<{ Params: { token: string } }>('/r/:token', async (req, reply) => {
    const data = await reportPageData(deps, req.params.token);
    if (!data) return sendPage(reply, { ...reportNotFoundPage(), noindex: true, status: 404 });
    return sendPage(reply, { ...pitchReportPage(data), noindex: true });
  });
}
