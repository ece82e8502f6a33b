package internal

import (
	"context"
	"net/http"
	"time"

	"github.com/fennec-forge/fennec/core/api"
)

// GitLab's GET and PUT /application/settings, for the settings this
// module keeps (appsettings.go); GitLab's other fields are not served.

// AppSettingsView is the settings resource.
type AppSettingsView struct {
	ID                       int64     `json:"id"`
	DefaultProjectVisibility string    `json:"default_project_visibility"`
	DefaultGroupVisibility   string    `json:"default_group_visibility"`
	CreatedAt                time.Time `json:"created_at"`
	UpdatedAt                time.Time `json:"updated_at"`
}

// AppSettingsInput is an update of the settings.
type AppSettingsInput struct {
	DefaultProjectVisibility *string `json:"default_project_visibility,omitempty" enum:"private,internal,public" doc:"What a new project is when its create names no visibility"`
	DefaultGroupVisibility   *string `json:"default_group_visibility,omitempty" enum:"private,internal,public" doc:"What a new group is when its create names no visibility"`
}

type appSettingsOutput struct{ Body AppSettingsView }

type appSettingsUpdateInput struct{ Body AppSettingsInput }

func viewOfSettings(a AppSettings) AppSettingsView {
	return AppSettingsView{ID: a.ID, DefaultProjectVisibility: a.DefaultProjectVisibility, DefaultGroupVisibility: a.DefaultGroupVisibility,
		CreatedAt: a.CreatedAt, UpdatedAt: a.UpdatedAt}
}

func (h handlers) registerAppSettings(a *api.API) {
	tags := []string{"settings"}
	api.Register(a, api.Op{ID: "get-application-settings", Method: http.MethodGet, Path: "/application/settings", Tags: tags,
		Summary: "The instance's settings (administrators)", Access: api.AdminOnly}, func(ctx context.Context, _ *struct{}) (*appSettingsOutput, error) {
		st, err := h.ApplicationSettings(ctx)
		if err != nil {
			return nil, err
		}
		return &appSettingsOutput{Body: viewOfSettings(st)}, nil
	})
	api.Register(a, api.Op{ID: "update-application-settings", Method: http.MethodPut, Path: "/application/settings", Tags: tags,
		Summary: "Change the instance's settings (administrators)", Access: api.AdminOnly}, func(ctx context.Context, in *appSettingsUpdateInput) (*appSettingsOutput, error) {
		st, err := h.UpdateApplicationSettings(ctx, AppSettingsFields{DefaultProjectVisibility: in.Body.DefaultProjectVisibility,
			DefaultGroupVisibility: in.Body.DefaultGroupVisibility})
		if err != nil {
			return nil, err
		}
		return &appSettingsOutput{Body: viewOfSettings(st)}, nil
	})
}
