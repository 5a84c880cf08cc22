export * from './common';
export * from './auth';
export * from './catalog';
export * from './wallet';
export * from './machines';
export * from './courses';
export * from './contact';
export * from './connect';
