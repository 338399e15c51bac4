import { describe, expect, it } from 'vitest';
import { readModels } from '../../src/areas';
import { catalogue, type EventType } from '../../src/domain/events';
import type { TypedEvent } from '../../src/eventstore/port';
import { dispatch, type EventHandlers, handledTypes } from '../../src/eventstore/projection';

const event = (type: EventType, data: Record<string, unknown> = {}) => ({ type, data, streamId: 's', metadata: {} }) as unknown as TypedEvent;

describe('projection handlers: one map per projection, its handles derived from it', () => {
  it('given a map of handlers, when its types are listed and an event dispatched, then exactly its keys are handled and only the matching handler runs', async () => {
    const seen: string[] = [];
    const handlers: EventHandlers<string[]> = {
      TopicCreated: (e, out) => void out.push(`topic ${e.data.name}`),
      async PromptCreated(e, out) {
        out.push(`prompt ${e.data.text}`);
      },
    };
    expect(handledTypes(handlers).sort()).toEqual(['PromptCreated', 'TopicCreated']);
    dispatch(handlers, event('TopicCreated', { name: 'Pricing' }), seen);
    await dispatch(handlers, event('PromptCreated', { text: 'best crm?' }), seen);
    expect(dispatch(handlers, event('CompetitorAdded'), seen)).toBeUndefined();
    expect(seen).toEqual(['topic Pricing', 'prompt best crm?']);
  });

  it('given every read model, then each handles known event types, each once', () => {
    for (const p of readModels) {
      expect(p.handles, p.name).not.toBe('all');
      const types = p.handles as readonly string[];
      expect(types.length, p.name).toBeGreaterThan(0);
      expect(new Set(types).size, p.name).toBe(types.length);
      for (const t of types) expect(Object.hasOwn(catalogue, t), `${p.name}: ${t}`).toBe(true);
    }
  });

  it('given the read models, then each reads the event types it read before handlers were maps', () => {
    const handles = Object.fromEntries(readModels.map((p) => [p.name, [...(p.handles as string[])].sort()]));
    expect(handles.websites).toEqual(['WebsiteCreated', 'WebsiteExternalIdSet', 'WebsiteStatusChanged']);
    expect(handles.organizations).toEqual(['ApiKeyCreated', 'ApiKeyRevoked', 'OrganizationCreated', 'UserAdded']);
    expect(handles.allowances).toEqual(['AllowanceReserved', 'AllowanceSettled']);
    expect(handles.emails).toEqual(['EmailDeferred', 'EmailFailed', 'EmailRequested', 'EmailSending', 'EmailSent']);
    expect(handles.observations).toEqual(['ObservationsRecorded']);
    expect(handles.runs).toEqual(['ResponseFailed', 'ResponseRecorded', 'ResponseRequested', 'RunEnded', 'RunSlotTaken', 'RunStarted']);
    expect(handles.answers).toEqual([
      'CompetitorAdded',
      'CompetitorIdentifiersChanged',
      'CompetitorRemoved',
      'CompetitorRenamed',
      'ResponseRecorded',
      'WebsiteCreated',
    ]);
    expect(handles.catalog).toEqual([
      'AttributeCreated',
      'CompetitorAdded',
      'CompetitorIdentifiersChanged',
      'CompetitorRemoved',
      'CompetitorRenamed',
      'LocationCreated',
      'PersonaCreated',
      'PromptAnswered',
      'PromptCreated',
      'PromptDeleted',
      'PromptScheduleArchived',
      'PromptScheduleCreated',
      'PromptScheduleUpdated',
      'PromptUpdated',
      'SavedViewCreated',
      'SavedViewUpdated',
      'TopicCreated',
      'TopicDeleted',
      'TopicRestored',
    ]);
    expect(handles.jobs).toEqual(expect.arrayContaining(['JobFailed', 'JobStarted', 'JobSucceeded']));
  });
});
