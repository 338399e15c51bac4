import { ActivityFilters, ActivityPage } from '../../../queries/activity/activity';
import * as activity from '../../app/activity';
import { parseToolDateRange } from '../../domain/dates';
import { DomainErrorException, invalid } from '../../domain/errors';
import { text } from '../../domain/schemas';
import { tool, READS } from '../tool';

const toolDate = (what: string) =>
  text().describe(`${what}: YYYY-MM-DD, an ISO 8601 timestamp (no zone = UTC) or a spelled-out date such as "March 5, 2026"`).optional();

/** REST's activity filters, with the tool server's date inputs for since/until. */
const ActivityToolInput = ActivityFilters.extend({
  since: toolDate('Earliest change (a date starts at 00:00:00Z)'),
  until: toolDate('Latest change (a date covers the day through 23:59:59.999Z)'),
}).strict();

export const activityTools = [
  tool({
    name: 'get_activity',
    title: 'Get the activity feed',
    annotations: READS,
    description:
      "The organization's changes (activity feed), newest first by default; filters website_id, entity_type, change_type, since, until, order, page_num (from 0), page_size (1 to 100). Partner keys only.",
    input: ActivityToolInput,
    output: ActivityPage,
    async handler(ctx, input) {
      const range = parseToolDateRange(input.since, input.until, { start: 'since', end: 'until' });
      if (!range.ok) throw new DomainErrorException(invalid(range.error));
      return activity.getActivity(ctx, { ...input, since: range.value.start?.toISOString(), until: range.value.end?.toISOString() });
    },
  }),
];
