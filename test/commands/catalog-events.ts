import type { DomainEvent } from '../../src/domain/events';

/** Past events of a catalogue, for given(Catalog, ...) */
export const competitorAdded = (id: string, url = `https://${id}.example.net`, name = id): DomainEvent => ({
  type: 'CompetitorAdded',
  data: { competitor_id: id, name, url, normalized_url: url.replace(/^https?:\/\/(www\.)?/, '').replace(/\/?$/, '/'), identifiers: [] },
});
export const topicCreated = (id: string, name = id): DomainEvent => ({ type: 'TopicCreated', data: { topic_id: id, name } });
export const topicDeleted = (id: string, name: string, prompts: string[] = []): DomainEvent => ({
  type: 'TopicDeleted',
  data: { topic_id: id, name, soft_deleted_prompt_ids: prompts },
});
export const promptCreated = (
  id: string,
  topicId: string | null = null,
  over: Partial<{ status: 'active' | 'paused'; type: 'branded' | 'non_branded'; tags: string[]; text: string }> = {},
): DomainEvent => ({
  type: 'PromptCreated',
  data: {
    prompt_id: id,
    text: over.text ?? `text of ${id}`,
    topic_id: topicId,
    type: over.type ?? 'non_branded',
    status: over.status ?? 'active',
    tags: over.tags ?? [],
  },
});
export const promptAnswered = (id: string): DomainEvent => ({ type: 'PromptAnswered', data: { prompt_id: id } });
export const promptDeleted = (id: string, soft: boolean): DomainEvent => ({ type: 'PromptDeleted', data: { prompt_id: id, soft_deleted: soft } });
export const scheduleCreated = (
  id: string,
  over: Partial<{ starts_on: string | null; ends_on: string | null; models: string[] }> = {},
): DomainEvent => ({
  type: 'PromptScheduleCreated',
  data: {
    schedule_id: id,
    name: `schedule ${id}`,
    models: over.models ?? ['m'],
    starts_on: over.starts_on ?? null,
    ends_on: over.ends_on ?? null,
    frequency: 'daily',
    is_active: true,
  },
});

export const W = '11111111-1111-4111-8111-111111111111';
