// Fennec's start-up of the vendored Swagger UI: the document is the
// server's own, found relative to this page, so the page works offline and
// under any prefix the server is mounted at.
window.addEventListener("load", function () {
  window.ui = SwaggerUIBundle({
    url: new URL("openapi.json", document.baseURI).href,
    dom_id: "#swagger-ui",
    deepLinking: true,
    persistAuthorization: true,
  });
});
