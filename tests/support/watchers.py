"""Watcher tokens for the tests of a watcher's powers (docs/API.md, "Watcher tokens")."""


def mint_watcher(api, token: str, project: str | None = "web") -> tuple[str, str]:
    """A real watcher token minted through the API by ``token``'s user: (secret, token id)."""
    response = api(token).post("/api/v1/tokens", {"name": "watcher", "writer": "watcher", "project": project},
                               format="json")
    assert response.status_code == 201, response.content
    return response.json()["token"], response.json()["id"]


def refused(response, code: str = "watcher_forbidden") -> bool:
    return response.status_code == 403 and response.json()["error"]["code"] == code
