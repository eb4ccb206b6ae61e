/** The suite's vitest config, running only the process guard's fixture (see process-guard.test.ts). */
import { defineConfig } from 'vitest/config';
import suite from '../../vitest.config.js';

export default defineConfig({ ...suite, test: { ...suite.test, include: ['test/setup/process-guard.fixture.ts'] } });
