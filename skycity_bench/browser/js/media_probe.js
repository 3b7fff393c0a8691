// Sound instrumentation for packaging.autoplay, injected before any
// page script. It changes no behaviour: every wrapper calls the original.
//   - HTMLMediaElement.play and the 'play' event (capture phase on document): every media
//     element that was asked to play, attached to the document or not;
//   - AudioContext / webkitAudioContext construction, AudioNode.connect (which nodes feed a
//     context's destination) and source starts (oscillators, buffers, media streams);
// (Which input handlers the page registered is read from the browser's own listener table:
// browser/input_handlers.py.)
// __SKYCITY__.media.report() returns the state now, as plain JSON.
// Hidden from the page: the API lives on the bench's namespace (cloak.js), play
// counts in a WeakMap (no expando on the element), and every wrapper looks native
// (__SKYCITY__.wrap / .ctor: name, length, toString, no prototype).
(() => {
  const NS = __SKYCITY__;
  if (NS.media) return;
  const elements = new Set();
  const playCalls = new WeakMap();
  const contexts = [];
  const note = (el) => { try { elements.add(el); } catch (e) { /* ignore */ } };

  NS.wrap(window.HTMLMediaElement && HTMLMediaElement.prototype, 'play', (el) => {
    try { note(el); playCalls.set(el, (playCalls.get(el) || 0) + 1); } catch (e) { /* not an element */ }
  });
  document.addEventListener('play', (e) => { if (e.target instanceof HTMLMediaElement) note(e.target); }, true);

  const made = (ctx) => { contexts.push({ ctx, created: performance.now(), sources: 0, feeds: [] }); };
  NS.ctor(window, 'AudioContext', made);
  NS.ctor(window, 'webkitAudioContext', made);
  const entry = (ctx) => contexts.find((c) => c.ctx === ctx);

  NS.wrap(window.AudioNode && AudioNode.prototype, 'connect', (node, args) => {
    try {
      if (window.AudioDestinationNode && args[0] instanceof AudioDestinationNode) {
        const c = entry(node.context);
        if (c && !c.feeds.includes(node)) c.feeds.push(node);
      }
    } catch (e) { /* ignore */ }
  });
  NS.wrap(window.AudioScheduledSourceNode && AudioScheduledSourceNode.prototype, 'start', (node) => {
    try { const c = entry(node.context); if (c) c.sources++; } catch (e) { /* ignore */ }
  });

  function media() {
    for (const el of document.querySelectorAll('audio, video')) elements.add(el);
    return Array.from(elements).slice(0, 50).map((el) => ({
      tag: el.tagName.toLowerCase(), src: String(el.currentSrc || el.src || '').slice(0, 200),
      in_document: el.isConnected, paused: el.paused, ended: el.ended, muted: el.muted, volume: el.volume,
      current_time: el.currentTime, autoplay_attribute: el.autoplay, play_calls: playCalls.get(el) || 0,
      error: el.error ? el.error.code : null,
      // An element is heard when it plays, is not muted and has volume. (A video with no audio
      // track is silent, but the page cannot tell the bench that: unmuted video counts.)
      audible: !el.paused && !el.ended && !el.muted && el.volume > 0,
    }));
  }
  function audio() {
    return contexts.map((c) => {
      // A context is heard when it runs and something feeds its destination, unless every
      // node feeding it is a GainNode at zero (the common "muted by default" design).
      const gains = c.feeds.map((n) => (window.GainNode && n instanceof GainNode) ? n.gain.value : null);
      const silentFeeds = gains.length > 0 && gains.every((g) => g === 0);
      return {
        state: c.ctx.state, current_time: c.ctx.currentTime, sources_started: c.sources,
        feeds_destination: c.feeds.map((n) => n.constructor && n.constructor.name || 'AudioNode'),
        feed_gains: gains, audible: c.ctx.state === 'running' && c.feeds.length > 0 && !silentFeeds,
      };
    });
  }
  NS.media = Object.freeze({ report: () => ({ media: media(), audio: audio() }) });
})();
