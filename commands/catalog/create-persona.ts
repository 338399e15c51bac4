import type { z } from 'zod';
import type { DomainError } from '../../src/domain/errors';
import { newId } from '../../src/domain/ids';
import type { CommandContext, Decision } from '../handle';
import { type CatalogState, handleCatalog, type Written } from './catalog';
import { describedItem } from './catalog-input';

export const CreatePersona = describedItem({
  name: "The persona's name (up to 200 characters)",
  description: 'Who the persona is (up to 2000 characters); optional',
});
export type CreatePersona = z.infer<typeof CreatePersona>;

export function decideCreatePersona(_s: CatalogState, cmd: CreatePersona & { persona_id: string }): Decision<Written> | DomainError {
  const data = { persona_id: cmd.persona_id, name: cmd.name, description: cmd.description ?? null };
  return { events: [{ type: 'PersonaCreated', data }], result: { id: data.persona_id } };
}

export function createPersona(ctx: CommandContext, input: CreatePersona) {
  const persona_id = newId();
  return handleCatalog(ctx, input.website_id, (s) => decideCreatePersona(s, { ...input, persona_id }));
}
