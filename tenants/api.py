"""Tenancy endpoints of API.md: me, users, projects, project members, tokens, org settings."""
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.response import Response

from plumbing.fields import StrictBooleanField, StrictCharField, StrictEmailField, StrictSlugField
from plumbing.schema import error, results_of
from tenants import selectors, services
from tenants.models import ApiToken, Membership, User
from tenants.views import TenantAPIView


class UserOutput(serializers.Serializer):
    id = serializers.UUIDField(source="user.id")
    email = serializers.EmailField(source="user.email")
    role = serializers.ChoiceField(choices=Membership.Role.choices)


class TokenOutput(serializers.Serializer):
    id = serializers.CharField()
    name = serializers.CharField()
    writer = serializers.ChoiceField(choices=ApiToken.Writer.choices)
    project = serializers.CharField(source="project.slug", allow_null=True)
    user_id = serializers.UUIDField()
    created_at = serializers.DateTimeField()
    last_used_at = serializers.DateTimeField(allow_null=True)
    revoked_at = serializers.DateTimeField(allow_null=True)


class ProjectOutput(serializers.Serializer):
    slug = serializers.SlugField()
    name = serializers.CharField()


class SettingsOutput(serializers.Serializer):
    require_supersede_reason = serializers.BooleanField()


class MeView(TenantAPIView):
    class Output(serializers.Serializer):
        class UserRef(serializers.Serializer):
            id = serializers.UUIDField()
            email = serializers.EmailField()

        user = UserRef()
        org = serializers.CharField(source="org.slug")
        role = serializers.ChoiceField(source="membership.role", choices=Membership.Role.choices)
        token = TokenOutput(allow_null=True)
        projects = serializers.ListField(child=serializers.SlugField())

    @extend_schema(operation_id="me", responses={200: Output})
    def get(self, request):
        principal = self.principal
        projects = [p.slug for p in selectors.project_list(principal=principal)]
        me = {"user": principal.user, "org": principal.org, "membership": principal.membership,
              "token": principal.token, "projects": projects}
        return Response(self.Output(me).data)


class UsersView(TenantAPIView):
    admin_only = True

    class Input(serializers.Serializer):
        email = StrictEmailField(max_length=User._meta.get_field("email").max_length)  # the column's 254
        role = serializers.ChoiceField(choices=Membership.Role.choices, default=Membership.Role.MEMBER)

    @extend_schema(operation_id="users_list", responses={200: results_of(UserOutput)})
    def get(self, request):
        return Response({"results": UserOutput(selectors.user_list(principal=self.principal), many=True).data})

    @extend_schema(operation_id="users_add", request=Input, responses={
        201: UserOutput, 409: error("Already a member of the organization.")})
    def post(self, request):
        data = self.validated(self.Input)
        membership = services.user_add(principal=self.principal, **data)
        return Response(UserOutput(membership).data, status=status.HTTP_201_CREATED)


class ProjectsView(TenantAPIView):
    class Input(serializers.Serializer):
        slug = StrictSlugField(max_length=64)
        name = StrictCharField(max_length=200, required=False, default="")

    @extend_schema(operation_id="projects_list", responses={200: results_of(ProjectOutput)})
    def get(self, request):
        projects = selectors.project_list(principal=self.principal)
        return Response({"results": ProjectOutput(projects, many=True).data})

    @extend_schema(operation_id="projects_create", request=Input, responses={
        201: ProjectOutput, 409: error("A project with this slug exists.")})
    def post(self, request):
        self.require_admin()
        data = self.validated(self.Input)
        project = services.project_create(principal=self.principal, **data)
        return Response(ProjectOutput(project).data, status=status.HTTP_201_CREATED)


class ProjectMembersView(TenantAPIView):
    admin_only = True

    class Input(serializers.Serializer):
        user_id = serializers.UUIDField()

    class Output(serializers.Serializer):
        project = serializers.SlugField()
        user_id = serializers.UUIDField()

    @extend_schema(operation_id="project_members_add", request=Input, responses={
        201: Output, 409: error("Already a member of the project.")})
    def post(self, request, slug: str):
        data = self.validated(self.Input)
        services.project_member_add(principal=self.principal, project_slug=slug, user_id=data["user_id"])
        return Response({"project": slug, "user_id": str(data["user_id"])}, status=status.HTTP_201_CREATED)


class ProjectMemberView(TenantAPIView):
    admin_only = True

    @extend_schema(operation_id="project_members_remove", responses={204: None})
    def delete(self, request, slug: str, user_id):
        services.project_member_remove(principal=self.principal, project_slug=slug, user_id=user_id)
        return Response(status=status.HTTP_204_NO_CONTENT)


class TokensView(TenantAPIView):
    class Input(serializers.Serializer):
        name = StrictCharField(max_length=200)
        writer = serializers.ChoiceField(choices=ApiToken.Writer.choices)
        project = StrictSlugField(max_length=64, allow_null=True, required=False, default=None)
        user_id = serializers.UUIDField(required=False, default=None)

    class Output(TokenOutput):
        token = serializers.CharField()

    @extend_schema(operation_id="tokens_list", responses={200: results_of(TokenOutput)})
    def get(self, request):
        return Response({"results": TokenOutput(selectors.api_token_list(principal=self.principal), many=True).data})

    @extend_schema(operation_id="tokens_issue", request=Input, responses={
        201: Output, 404: error("No such project or user (or not visible).")})
    def post(self, request):
        data = self.validated(self.Input)
        token, secret = services.api_token_issue(
            principal=self.principal, name=data["name"], writer=data["writer"],
            project_slug=data["project"], user_id=data["user_id"],
        )
        return Response({**TokenOutput(token).data, "token": secret}, status=status.HTTP_201_CREATED)


class TokenView(TenantAPIView):
    @extend_schema(operation_id="tokens_revoke", responses={204: None})
    def delete(self, request, token_id: str):
        services.api_token_revoke(principal=self.principal, token_id=token_id)
        return Response(status=status.HTTP_204_NO_CONTENT)


class OrgSettingsView(TenantAPIView):
    class Input(serializers.Serializer):
        require_supersede_reason = StrictBooleanField()

    @extend_schema(operation_id="org_settings_get", responses={200: SettingsOutput})
    def get(self, request):
        return Response(SettingsOutput(self.principal.org).data)

    @extend_schema(operation_id="org_settings_update", request=Input, responses={200: SettingsOutput})
    def post(self, request):
        self.require_admin()
        data = self.validated(self.Input)
        org = services.org_settings_update(principal=self.principal, **data)
        return Response(SettingsOutput(org).data)
