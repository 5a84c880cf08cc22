// Each domain owns one schema file matching its migration in server/migrations; this index gathers them.
export * from './identity';
export * from './commerce';
export * from './machines';
export * from './courses';
export * from './connect';
export * from './limits';
export * from './admin';
export * from './two-factor';
export * from './sso';
