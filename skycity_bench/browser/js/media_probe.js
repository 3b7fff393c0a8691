// Sound and input instrumentation for packaging.autoplay (issue 4), injected before any
// page script. It changes no behaviour: every wrapper calls the original.
//   - HTMLMediaElement.play and the 'play' event (capture phase on document): every media
//     element that was asked to play, attached to the document or not;
//   - AudioContext / webkitAudioContext construction, AudioNode.connect (which nodes feed a
//     context's destination) and source starts (oscillators, buffers, media streams);
//   - addEventListener for input events on window/document/elements, so a demo that waits
//     for a click can be named as such.
// window.__skycityMedia.report() returns the state now, as plain JSON.
(() => {
  if (window.__skycityMedia) return;
  const elements = new Set();
  const contexts = [];
  const listeners = [];
  const INPUT = new Set(['click', 'pointerdown', 'pointerup', 'mousedown', 'mouseup', 'touchstart', 'touchend',
                         'keydown', 'keyup', 'keypress']);
  const note = (el) => { try { elements.add(el); } catch (e) { /* ignore */ } };

  const M = window.HTMLMediaElement && HTMLMediaElement.prototype;
  if (M && M.play) {
    const play = M.play;
    M.play = function () { note(this); this.__skycityPlayCalls = (this.__skycityPlayCalls || 0) + 1; return play.apply(this, arguments); };
  }
  document.addEventListener('play', (e) => { if (e.target instanceof HTMLMediaElement) note(e.target); }, true);

  function wrapCtor(name) {
    const C = window[name];
    if (typeof C !== 'function') return;
    const W = function (...args) {
      const ctx = new C(...args);
      contexts.push({ ctx, created: performance.now(), sources: 0, feeds: [] });
      return ctx;
    };
    W.prototype = C.prototype;
    Object.setPrototypeOf(W, C);
    window[name] = W;
  }
  wrapCtor('AudioContext');
  wrapCtor('webkitAudioContext');
  const entry = (ctx) => contexts.find((c) => c.ctx === ctx);

  const N = window.AudioNode && AudioNode.prototype;
  if (N && N.connect) {
    const connect = N.connect;
    N.connect = function (dest) {
      try {
        if (window.AudioDestinationNode && dest instanceof AudioDestinationNode) {
          const c = entry(this.context);
          if (c && !c.feeds.includes(this)) c.feeds.push(this);
        }
      } catch (e) { /* ignore */ }
      return connect.apply(this, arguments);
    };
  }
  const S = window.AudioScheduledSourceNode && AudioScheduledSourceNode.prototype;
  if (S && S.start) {
    const start = S.start;
    S.start = function () { const c = entry(this.context); if (c) c.sources++; return start.apply(this, arguments); };
  }

  const add = EventTarget.prototype.addEventListener;
  EventTarget.prototype.addEventListener = function (type, fn, opts) {
    if (INPUT.has(type) && listeners.length < 200) {
      const t = this === window ? 'window' : this === document ? 'document'
        : (this && this.tagName ? this.tagName.toLowerCase() + (this.id ? '#' + this.id : '') : 'other');
      listeners.push({ target: t, type });
    }
    return add.call(this, type, fn, opts);
  };

  function media() {
    for (const el of document.querySelectorAll('audio, video')) elements.add(el);
    return Array.from(elements).slice(0, 50).map((el) => ({
      tag: el.tagName.toLowerCase(), src: String(el.currentSrc || el.src || '').slice(0, 200),
      in_document: el.isConnected, paused: el.paused, ended: el.ended, muted: el.muted, volume: el.volume,
      current_time: el.currentTime, autoplay_attribute: el.autoplay, play_calls: el.__skycityPlayCalls || 0,
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
  Object.defineProperty(window, '__skycityMedia', {
    value: Object.freeze({ report: () => ({ media: media(), audio: audio(), input_listeners: listeners.slice(0, 50) }) }),
    writable: false, configurable: false, enumerable: false,
  });
})();
