import { HashEmbedder } from '../../src/embed/hash-embedder.js';
import { embedderContract } from './embedder.contract.js';

// The default embedder with its default word split, as used when no analyzer is passed.
embedderContract({ name: 'HashEmbedder', create: async () => new HashEmbedder() });
