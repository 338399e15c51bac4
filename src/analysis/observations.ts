/** Attribute observations of one answer: see ./observations/index.ts for the rules and how the module is split. */
export * from './observations/index';
