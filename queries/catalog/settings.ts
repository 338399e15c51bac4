import type { Knex } from 'knex';

/** Personas, locations and attributes of a website: small lists, in creation order. */

import type { Attribute, Location, Persona } from './views';

export type { Attribute, Location, Persona } from './views';

export const listPersonas = (db: Knex, websiteId: string): Promise<Persona[]> =>
  db('rm_personas').where('website_id', websiteId).orderBy('seq').select('id', 'name', 'description');

export const getPersona = (db: Knex, websiteId: string, id: string): Promise<Persona | undefined> =>
  db('rm_personas').where({ website_id: websiteId, id }).first('id', 'name', 'description');

export const listLocations = (db: Knex, websiteId: string): Promise<Location[]> =>
  db('rm_locations').where('website_id', websiteId).orderBy('seq').select('id', 'location', 'country', 'region', 'city');

export const getLocation = (db: Knex, websiteId: string, id: string): Promise<Location | undefined> =>
  db('rm_locations').where({ website_id: websiteId, id }).first('id', 'location', 'country', 'region', 'city');

export const listAttributes = (db: Knex, websiteId: string): Promise<Attribute[]> =>
  db('rm_attributes').where('website_id', websiteId).orderBy('seq').select('id', 'name', 'description');

export const getAttribute = (db: Knex, websiteId: string, id: string): Promise<Attribute | undefined> =>
  db('rm_attributes').where({ website_id: websiteId, id }).first('id', 'name', 'description');
