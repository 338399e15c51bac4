import type { EventType } from './events';

/** A stream's event types as a const list, each checked against the catalogue: `EventsOf<typeof list>` is their union. */
export const eventTypeList = <const L extends readonly EventType[]>(...types: L): L => types;
