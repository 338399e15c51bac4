import { z } from 'zod';
import { CreditEventsView, CreditRange, CreditUsageView } from '../../../queries/credits/views';
import { creditUsageEvents, creditUsage } from '../../app/credits';
import { toolDateSchema } from '../../domain/dates';
import { PageSize, text, Uuid } from '../../domain/schemas';
import { tool, READS } from '../tool';

const Window = {
  website_id: Uuid.optional().describe("Only this website's credits (default: the whole organization's)"),
  range: CreditRange.default('30d').describe('The period up to now: 24h, 7d, 30d (default), 90d or all'),
  start_at_utc: toolDateSchema('start').optional(),
  end_at_utc: toolDateSchema('end').optional(),
};

/** Credit usage for assistants (global key): totals by kind, and the events themselves, newest first. */
export const creditsTools = [
  tool({
    name: 'get_credit_usage',
    title: 'Get credit usage',
    description: 'Credits used by kind over a period (range, or start_at_utc/end_at_utc), for the organization or one website. Needs a global key.',
    input: z.strictObject(Window),
    output: CreditUsageView,
    annotations: READS,
    handler: (ctx, input) => creditUsage(ctx, input),
  }),
  tool({
    name: 'get_credit_usage_events',
    title: 'Get credit usage events',
    description:
      'The credit events behind get_credit_usage, newest first: kind, credits and the answer, job or run charged. Page on with next_offset (null at the end). Needs a global key.',
    input: z.strictObject({
      ...Window,
      page_size: PageSize(false, 50, 25),
      next_offset: text().max(512).optional().describe('The next_offset of the previous page'),
    }),
    output: CreditEventsView,
    annotations: READS,
    handler: (ctx, input) => creditUsageEvents(ctx, input),
  }),
];
