/**
 * ai_image: `image_generate(prompt, size)` through an OpenAI-compatible images API of the owner's
 * choosing (its own base_url, key and model; core.llm's key is never used). The picture goes into
 * the media store and the tool answers its media id, never the base64: the model sends the id to a
 * channel that carries images with output_send__<channel> (type image), as it sends any stored
 * picture; the web page and QQ take media ids.
 *
 * Off by default: without plugin.ai_image.base_url the tool is not offered and the health line
 * says so. The tool follows the settings while the daemon runs: setting base_url offers it,
 * clearing it withdraws it, and a change of sizes or timeout is in its next description.
 *
 * A Lua adapter for images is not offered: the Lua adapter contract (src/llm/spec, adapters/) is
 * one for chat models (messages in, stream parts out); images would need a second contract.
 */
import {
  definePlugin,
  HomeAgentError,
  isHomeAgentError,
  type PluginContext,
  type PluginHealth,
  type PluginInstance,
  pictureMime,
  type ToolContext,
  ToolError,
  type ToolErrorReason,
} from '../../src/sdk/index.js';
import { generateImage } from './images-client.js';
import type { AiImageSettings } from './settings-schema.js';

export const TOOL_NAME = 'image_generate';
/** The tool's own timeout is the request's plus this, so the request's clearer error comes first. */
const TOOL_TIMEOUT_MARGIN_MS = 5000;

/** How each code reads to the model. */
const REASON: Record<string, ToolErrorReason> = {
  HA_ERR_AI_IMAGE_NOT_CONFIGURED: 'unavailable',
  HA_ERR_AI_IMAGE_UNREACHABLE: 'unavailable',
  HA_ERR_AI_IMAGE_HTTP: 'failed',
  HA_ERR_AI_IMAGE_TIMEOUT: 'timeout',
  HA_ERR_AI_IMAGE_TOO_LARGE: 'rejected',
  HA_ERR_AI_IMAGE_BAD_RESPONSE: 'failed',
  HA_ERR_AI_IMAGE_NOT_IMAGE: 'failed',
  HA_ERR_AI_IMAGE_URL_REFUSED: 'rejected',
  HA_ERR_MEDIA_TOO_LARGE: 'rejected',
};

export class AiImagePlugin implements PluginInstance {
  readonly #ctx: PluginContext<AiImageSettings>;
  #unregisterTool: (() => void) | undefined;
  #unsubscribe: (() => void) | undefined;

  constructor(ctx: PluginContext<AiImageSettings>) {
    this.#ctx = ctx;
  }

  async start(): Promise<void> {
    this.#sync();
    this.#unsubscribe = this.#ctx.settings.onChange(() => this.#sync());
    if (!this.#configured()) this.#ctx.log.info('image generation is off: plugin.ai_image.base_url is not set');
  }

  async stop(): Promise<void> {
    this.#unsubscribe?.();
    this.#unsubscribe = undefined;
    this.#unregisterTool?.();
    this.#unregisterTool = undefined;
  }

  health(): Required<PluginHealth> {
    if (!this.#configured()) {
      return {
        ok: true,
        detail: 'image generation is off: plugin.ai_image.base_url is not set, so image_generate is not offered',
        detail_zh: '图片生成未开启：没有设置 plugin.ai_image.base_url，因此不提供 image_generate',
      };
    }
    const origin = new URL(this.#ctx.settings.get('base_url')).origin;
    return { ok: true, detail: `image_generate draws with ${origin}`, detail_zh: `image_generate 使用 ${origin} 生成图片` };
  }

  #configured(): boolean {
    return this.#ctx.settings.get('base_url') !== '';
  }

  /** Offers the tool, described with the current settings, exactly while an endpoint is configured. */
  #sync(): void {
    this.#unregisterTool?.();
    this.#unregisterTool = undefined;
    if (!this.#configured()) return;
    const settings = this.#ctx.settings.values();
    this.#unregisterTool = this.#ctx.tools.register<{ prompt: string; size?: string }>({
      name: TOOL_NAME,
      tier: 'act',
      timeout_ms: settings.timeout_ms + TOOL_TIMEOUT_MARGIN_MS,
      description:
        'Draws a picture from a description and stores it; answers its media_id. To show it, send it with output_send__<channel> (type image, payload the media_id) to a channel that carries images (output_list_channels says which).',
      parameters: {
        type: 'object',
        properties: {
          prompt: {
            type: 'string',
            minLength: 1,
            maxLength: settings.max_prompt_chars,
            description: 'What the picture shows, in detail (subject, style, colours, composition).',
          },
          size: { type: 'string', enum: settings.sizes, description: `WIDTHxHEIGHT; default ${defaultSize(settings)}.` },
        },
        required: ['prompt'],
        additionalProperties: false,
      },
      execute: (args, context) => this.#generate(args, context),
    });
  }

  async #generate(args: { prompt: string; size?: string }, context: ToolContext): Promise<Record<string, unknown>> {
    const settings = this.#ctx.settings.values();
    if (settings.base_url === '') {
      throw new ToolError({
        reason: 'unavailable',
        detail: 'HA_ERR_AI_IMAGE_NOT_CONFIGURED: image generation is off (plugin.ai_image.base_url is not set)',
        hint: 'tell the person that the owner has to configure an images API first',
      });
    }
    const prompt = args.prompt.trim();
    if (prompt === '') throw new ToolError({ reason: 'required', field: 'prompt', detail: 'prompt is empty' });
    const size = args.size ?? defaultSize(settings);
    if (!settings.sizes.includes(size)) {
      throw new ToolError({
        reason: 'enum',
        field: 'size',
        detail: `size ${size} is not offered`,
        hint: `use one of ${settings.sizes.join(', ')}`,
      });
    }
    const started = performance.now();
    try {
      const image = await generateImage({
        base_url: settings.base_url,
        api_key: settings.api_key,
        model: settings.model,
        prompt,
        size,
        response_format: settings.response_format,
        timeout_ms: settings.timeout_ms,
        max_bytes: settings.max_bytes,
        signal: context.signal,
      });
      // The store also takes sounds: what an images API sends is kept only when it is a picture.
      const mime = pictureMime(image.bytes);
      if (mime === undefined) {
        throw new HomeAgentError(
          'HA_ERR_AI_IMAGE_NOT_IMAGE',
          `the images API sent ${image.bytes.byteLength} bytes that are not a png, jpeg, gif or webp picture`,
        );
      }
      const stored = this.#ctx.media.put(image.bytes);
      this.#ctx.log.info(
        {
          media_id: stored.digest,
          bytes: stored.bytes,
          size,
          form: image.form,
          ms: Math.round(performance.now() - started),
          task_id: context.task_id,
        },
        'picture generated and stored',
      );
      return {
        media_id: stored.digest,
        mime: stored.mime,
        bytes: stored.bytes,
        size,
        ...(image.revised_prompt !== undefined && { revised_prompt: image.revised_prompt }),
        send: `output_send__<channel> with type image and payload ${stored.digest}, to a channel that carries images`,
      };
    } catch (error) {
      if (!isHomeAgentError(error)) throw error;
      this.#ctx.log.warn({ code: error.code, task_id: context.task_id }, `image generation failed: ${error.message}`);
      throw new ToolError({
        reason: REASON[error.code] ?? 'failed',
        detail: `${error.code}: ${error.message}`,
        hint: 'tell the person the picture could not be made and why; retry only if the reason suggests it helps',
      });
    }
  }
}

function defaultSize(settings: AiImageSettings): string {
  return settings.sizes.includes(settings.default_size) ? settings.default_size : (settings.sizes[0] ?? settings.default_size);
}

export default definePlugin<AiImageSettings>((ctx) => new AiImagePlugin(ctx));
