import type { EventType } from './events';

/** A stream's event types as a const list, each checked against the catalogue: `EventsOf<typeof list>` is their union. */
export const eventTypeList = <const L extends readonly EventType[]>(...types: L): L => types;

/** The event types of one group of the catalogue (src/domain/events.ts), as a list `EventsOf` takes. */
export const typesOf = <G extends object>(group: G): readonly Extract<keyof G, string>[] => Object.keys(group) as Extract<keyof G, string>[];
