import { randomBytes } from 'node:crypto';
import type { TestProject } from 'vitest/node';
import { onServer } from './pg-server';

declare module 'vitest' {
  export interface ProvidedContext {
    /** the name of this run's schema template on the real server (see test/support/db.ts), or null (none) */
    schemaTemplate: string | null;
  }
}

/**
 * Names this run's schema template: a database on the real server with every table a server creates at start and no
 * row, copied for each test file's database (`create database ... template`), so that a file's server finds its
 * schema instead of creating it (hundreds of DDL statements, each a commit). The first file that needs it builds it
 * (test/support/db.ts); it is dropped at the end of the run. TEST_SCHEMA_TEMPLATE=off: every file's schema is built
 * from nothing, as before the template.
 */
export default function setup(project: TestProject): () => Promise<void> {
  const serverUrl = process.env.DATABASE_URL;
  if (!serverUrl || process.env.TEST_SCHEMA_TEMPLATE === 'off') {
    project.provide('schemaTemplate', null);
    return async () => {};
  }
  const name = `aivis_tpl_${randomBytes(6).toString('hex')}`;
  project.provide('schemaTemplate', name);
  return () => onServer(serverUrl, `drop database if exists ${name} with (force)`);
}
