import { defineConfig } from 'vitest/config';

// Unit tests of the web app's pure logic (formatting, validation, payload decoding); journeys are in e2e/.
export default defineConfig({
  test: { include: ['test/**/*.test.ts'], environment: 'node' },
});
