/**
 * The settings of the ai_image plugin, `plugin.ai_image.*`: the images endpoint is its own source
 * (address, key, model), never core.llm's: the owner decides which vendor gets the household's
 * picture requests and pays for them. An empty base_url leaves the plugin loaded but offering no
 * tool.
 */
import { type Static, Type } from '@sinclair/typebox';
import { pluginEnabled, pluginMeta } from '../../src/sdk/settings.js';

const SIZE = '^[1-9][0-9]{1,4}x[1-9][0-9]{1,4}$';

export const settingsSchema = Type.Object(
  {
    enabled: pluginEnabled('ai_image'),
    base_url: Type.String({
      default: '',
      maxLength: 2048,
      pattern: '^(|https?://.+)$',
      ...pluginMeta(
        'ai_image',
        "Base URL of an OpenAI-compatible images API (https://api.openai.com/v1, a local server's http://127.0.0.1:8000/v1); the request goes to <base_url>/images/generations. Empty: image generation is off and image_generate is not offered.",
        {
          description_zh:
            'OpenAI 兼容图像接口的基础 URL（如 https://api.openai.com/v1，本地服务 http://127.0.0.1:8000/v1），请求发往 <base_url>/images/generations。留空：不生成图片，也不提供 image_generate。',
        },
      ),
    }),
    api_key: Type.String({
      default: '',
      maxLength: 4096,
      ...pluginMeta(
        'ai_image',
        "Key sent as Authorization: Bearer to the images API; empty sends none. Its own key: core.llm's is never used.",
        {
          description_zh: '以 Authorization: Bearer 发给图像接口的密钥；留空则不发送。这是它自己的密钥，从不使用 core.llm 的密钥。',
          secret: true,
        },
      ),
    }),
    model: Type.String({
      default: '',
      maxLength: 200,
      ...pluginMeta('ai_image', 'Model named in the request (dall-e-3, gpt-image-1, a local model); empty leaves it to the server.', {
        description_zh: '请求中指定的模型（dall-e-3、gpt-image-1 或本地模型）；留空由服务端决定。',
      }),
    }),
    response_format: Type.Union([Type.Literal('b64_json'), Type.Literal('url'), Type.Literal('server_default')], {
      default: 'b64_json',
      ...pluginMeta(
        'ai_image',
        'How the picture comes back: b64_json (in the answer), url (fetched from the address the server gives), or server_default (the parameter is not sent: gpt-image-1 refuses it). Both forms are read whichever was asked.',
        {
          description_zh:
            '图片的返回方式：b64_json（在应答中）、url（从服务端给出的地址下载）或 server_default（不发送该参数，gpt-image-1 不接受它）。无论请求哪种，两种形式都能读取。',
        },
      ),
    }),
    sizes: Type.Array(Type.String({ pattern: SIZE }), {
      default: ['256x256', '512x512', '1024x1024', '1792x1024', '1024x1792'],
      minItems: 1,
      maxItems: 20,
      ...pluginMeta('ai_image', 'Sizes image_generate offers (WIDTHxHEIGHT, as the server accepts them).', {
        description_zh: 'image_generate 可选的尺寸（宽x高，按服务端接受的写法）。',
      }),
    }),
    default_size: Type.String({
      default: '1024x1024',
      pattern: SIZE,
      ...pluginMeta('ai_image', 'Size used when the model gives none; one of sizes.', {
        description_zh: '模型未指定尺寸时使用的尺寸，须是 sizes 之一。',
      }),
    }),
    timeout_ms: Type.Integer({
      default: 120000,
      minimum: 1000,
      maximum: 600000,
      ...pluginMeta('ai_image', 'Longest wait for the images API, the download of a url answer included.', {
        description_zh: '等待图像接口的最长时间（包括下载 url 形式的图片）。',
      }),
    }),
    max_bytes: Type.Integer({
      default: 20971520,
      minimum: 1024,
      maximum: 104857600,
      ...pluginMeta(
        'ai_image',
        "Largest picture accepted, in bytes (the JSON answer may be a third larger for its base64). The media store's own limit, core.knowledge.max_media_mb, applies too.",
        {
          description_zh:
            '接受的最大图片字节数（JSON 应答因 base64 可以大三分之一）。媒体库自身的上限 core.knowledge.max_media_mb 同样适用。',
        },
      ),
    }),
    max_prompt_chars: Type.Integer({
      default: 4000,
      minimum: 10,
      maximum: 32000,
      ...pluginMeta('ai_image', 'Longest prompt image_generate sends.', { description_zh: 'image_generate 发送的提示词最长字符数。' }),
    }),
  },
  { additionalProperties: false, default: {} },
);

export type AiImageSettings = Static<typeof settingsSchema>;
