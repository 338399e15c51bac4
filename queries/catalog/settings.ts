import type { Knex } from 'knex';

/** Personas, locations and attributes of a website: small lists, in creation order. */

export interface Persona {
  id: string;
  name: string;
  description: string | null;
}

export interface Location {
  id: string;
  location: string;
  country: string;
  region: string | null;
  city: string | null;
}

export interface Attribute {
  id: string;
  name: string;
  description: string | null;
}

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
