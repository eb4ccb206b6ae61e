import { describe, expect, it } from 'vitest';
import { MemoryStore } from '../../adapters/memory/index.js';
import { storeConformance } from '../../src/testing/conformance/index.js';

storeConformance('MemoryStore', { describe, it, expect, createStore: () => new MemoryStore() });
