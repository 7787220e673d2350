// dbtasks dashboard: live refresh, CSRF header for htmx, confirmations and the throughput chart.
// A static file, so the Content-Security-Policy needs no inline script.
(function () {
  'use strict';

  var REFRESH_MS = 5000;

  function meta(name) {
    var m = document.querySelector('meta[name="' + name + '"]');
    return m ? m.getAttribute('content') : null;
  }

  // htmx requests carry the CSRF token from the page's meta tags when security is on.
  document.addEventListener('htmx:configRequest', function (evt) {
    var header = meta('csrf-header');
    var token = meta('csrf-token');
    if (header && token) {
      evt.detail.headers[header] = token;
    }
  });

  // Live refresh: every REFRESH_MS, regions marked data-live are re-fetched by htmx, only while the
  // tab is visible (document.hidden pauses it; a refresh runs at once when the tab shows again).
  function refreshLive() {
    if (document.hidden || !window.htmx) {
      return;
    }
    document.querySelectorAll('[data-live]').forEach(function (el) {
      window.htmx.trigger(el, 'refresh');
    });
  }

  function setLiveStatus() {
    var s = document.getElementById('live-status');
    if (s) {
      s.textContent = document.hidden ? 'paused' : 'live';
      s.classList.toggle('paused', document.hidden);
    }
  }

  setInterval(refreshLive, REFRESH_MS);
  document.addEventListener('visibilitychange', function () {
    setLiveStatus();
    if (!document.hidden) {
      refreshLive();
    }
  });

  // Buttons with data-confirm ask first.
  document.addEventListener('click', function (evt) {
    var b = evt.target.closest('[data-confirm]');
    if (b && !window.confirm(b.getAttribute('data-confirm'))) {
      evt.preventDefault();
    }
  });

  // Throughput and failures per minute, drawn with uPlot from /dashboard/series.
  var chart = null;

  function drawChart() {
    var el = document.getElementById('chart');
    if (!el || !window.uPlot || document.hidden) {
      return;
    }
    fetch(el.getAttribute('data-series'), { headers: { Accept: 'application/json' }, credentials: 'same-origin' })
      .then(function (r) { return r.ok ? r.json() : null; })
      .then(function (s) {
        if (!s) {
          return;
        }
        var data = [s.epochSeconds, s.succeeded, s.failed];
        var width = Math.max(280, el.clientWidth);
        if (chart) {
          chart.setData(data);
          return;
        }
        chart = new window.uPlot({
          width: width,
          height: 240,
          series: [
            {},
            { label: 'succeeded / min', stroke: '#2e7d32', width: 2 },
            { label: 'failed / min', stroke: '#c62828', width: 2 }
          ],
          axes: [{}, { size: 60 }]
        }, data, el);
        window.addEventListener('resize', function () {
          chart.setSize({ width: Math.max(280, el.clientWidth), height: 240 });
        });
      })
      .catch(function () { /* the next refresh tries again */ });
  }

  document.addEventListener('DOMContentLoaded', function () {
    setLiveStatus();
    drawChart();
    setInterval(drawChart, REFRESH_MS * 2);
  });
})();
